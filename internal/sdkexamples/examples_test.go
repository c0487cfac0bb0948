// Package sdkexamples_test builds the example plugins of sdk/examples from
// source with scripts/build-examples.sh (Go, AssemblyScript, C, Rust) and runs
// the AssemblyScript, C and Rust ones: in the host against real files, and through the
// ccm binary from a vendor manifest applied with allow_apply: false and
// grants.
//
// Without the AssemblyScript, C or Rust toolchain the tests skip, naming the
// script; with CCM_REQUIRE_EXAMPLES=1 (CI) they fail instead.
package sdkexamples_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	ccmtest.Cleanup()
	os.Exit(code)
}

// built holds the result of the one build this test binary makes.
var built struct {
	once sync.Once
	dir  string
	skip string // why the toolchain is missing
	err  error
}

// examples builds the example plugins once and returns the directory holding
// TYPE.wasm for each; it skips (or, with CCM_REQUIRE_EXAMPLES=1, fails) when
// a toolchain is missing.
func examples(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "ccm-examples-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		cmd := exec.Command("bash", filepath.Join(repoRoot(), "scripts", "build-examples.sh"), "--no-install", dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err = cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() == 2:
			built.skip = "scripts/build-examples.sh: " + strings.TrimSpace(out.String())
		case err != nil:
			built.err = fmt.Errorf("scripts/build-examples.sh: %v\n%s", err, out.String())
		default:
			fmt.Fprintf(os.Stderr, "built the example plugins in %v:\n%s", time.Since(start).Round(time.Millisecond), out.String())
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	if built.skip != "" {
		if os.Getenv("CCM_REQUIRE_EXAMPLES") == "1" {
			t.Fatalf("CCM_REQUIRE_EXAMPLES=1 but %s", built.skip)
		}
		t.Skip(built.skip)
	}
	return built.dir
}

func repoRoot() string {
	wd, err := os.Getwd() // internal/sdkexamples
	if err != nil {
		panic(err)
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func readWasm(t *testing.T, dir, typ string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, typ+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestImportsOnlyExtism checks that the AssemblyScript, C and Rust plugins need
// nothing but the Extism kernel and ccm's host calls: no WASI, no env.
func TestImportsOnlyExtism(t *testing.T) {
	dir := examples(t)
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	for _, typ := range []string{"file_line", "ini_setting", "sysctl_conf"} {
		t.Run(typ, func(t *testing.T) {
			cm, err := rt.CompileModule(ctx, readWasm(t, dir, typ))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range cm.ImportedFunctions() {
				mod, name, _ := f.Import()
				if mod != "extism:host/env" && mod != abi.HostNamespace {
					t.Errorf("imports %s.%s; want only extism:host/env and %s", mod, name, abi.HostNamespace)
				}
			}
			for _, export := range []string{abi.ExportDescribe, abi.ExportValidate, abi.ExportStatus, abi.ExportApply} {
				if _, ok := cm.ExportedFunctions()[export]; !ok {
					t.Errorf("does not export %s", export)
				}
			}
		})
	}
}

// exampleCase is one resource of an example type against one starting file.
type exampleCase struct {
	name    string
	before  *string // nil = the file does not exist
	props   map[string]any
	after   string
	changed bool
}

func ptr(s string) *string { return &s }

var iniCases = []exampleCase{
	{name: "change a value", before: ptr("[server]\nport = 80\nhost = a\n\n[client]\nx=1\n"),
		props: map[string]any{"section": "server", "setting": "port", "value": "8080"},
		after: "[server]\nport = 8080\nhost = a\n\n[client]\nx=1\n", changed: true},
	{name: "a number value", before: ptr("[server]\nport=80\n"),
		props: map[string]any{"section": "server", "setting": "port", "value": 8080},
		after: "[server]\nport = 8080\n", changed: true},
	{name: "add to a section", before: ptr("[server]\nport = 80\n\n[client]\nx=1\n"),
		props: map[string]any{"section": "server", "setting": "host", "value": "b"},
		after: "[server]\nport = 80\nhost = b\n\n[client]\nx=1\n", changed: true},
	{name: "add a section", before: ptr("[server]\nport = 80"),
		props: map[string]any{"section": "db", "setting": "url", "value": "x"},
		after: "[server]\nport = 80\n\n[db]\nurl = x\n", changed: true},
	{name: "before the first section", before: ptr("; top\na = 1\n[s]\nb = 2\n"),
		props: map[string]any{"setting": "b", "value": "3"},
		after: "; top\na = 1\nb = 3\n[s]\nb = 2\n", changed: true},
	{name: "already set", before: ptr("[s]\n  k=v  \n"),
		props: map[string]any{"section": "s", "setting": "k", "value": "v"},
		after: "[s]\n  k=v  \n"},
	{name: "a comment is not a setting", before: ptr("[s]\n;k = v\n"),
		props: map[string]any{"section": "s", "setting": "k", "value": "v"},
		after: "[s]\n;k = v\nk = v\n", changed: true},
	{name: "remove", before: ptr("[s]\nk = v\nj = w\n"),
		props: map[string]any{"section": "s", "setting": "k", "ensure": "absent"},
		after: "[s]\nj = w\n", changed: true},
	{name: "remove, not there", before: ptr("[s]\nj = w\n"),
		props: map[string]any{"section": "s", "setting": "k", "ensure": "absent"},
		after: "[s]\nj = w\n"},
	{name: "create the file", props: map[string]any{"section": "s", "setting": "k", "value": "v é ✓"},
		after: "[s]\nk = v é ✓\n", changed: true},
}

var lineCases = []exampleCase{
	{name: "append", before: ptr("a\nb"), props: map[string]any{"line": "c"}, after: "a\nb\nc\n", changed: true},
	{name: "already there", before: ptr("a\nc\nb\n"), props: map[string]any{"line": "c"}, after: "a\nc\nb\n"},
	{name: "replace a match", before: ptr("# Managed by hand\nfoo\n"),
		props: map[string]any{"line": "# Managed by ccm", "match": "# Managed by"},
		after: "# Managed by ccm\nfoo\n", changed: true},
	{name: "remove", before: ptr("a\nc\nb\n"), props: map[string]any{"line": "c", "ensure": "absent"}, after: "a\nb\n", changed: true},
	{name: "remove, not there", before: ptr("a\nb\n"), props: map[string]any{"line": "c", "ensure": "absent"}, after: "a\nb\n"},
	{name: "create the file", props: map[string]any{"line": "héllo ✓ \"q\""}, after: "héllo ✓ \"q\"\n", changed: true},
}

var sysctlCases = []exampleCase{
	{name: "change a value", before: ptr("# forwarding\nnet.ipv4.ip_forward = 0\nvm.swappiness=10\n"),
		props: map[string]any{"key": "net.ipv4.ip_forward", "value": 1},
		after: "# forwarding\nnet.ipv4.ip_forward = 1\nvm.swappiness=10\n", changed: true},
	{name: "a later line wins, so it goes", before: ptr("a.b = 1\nx = y\n-a.b=2\n"),
		props: map[string]any{"key": "a.b", "value": "1"},
		after: "a.b = 1\nx = y\n", changed: true},
	{name: "append", before: ptr("x = y"), props: map[string]any{"key": "kernel.panic", "value": "10"},
		after: "x = y\nkernel.panic = 10\n", changed: true},
	{name: "already set", before: ptr("# c\n  vm.swappiness=10  \n"), props: map[string]any{"key": "vm.swappiness", "value": 10},
		after: "# c\n  vm.swappiness=10  \n"},
	{name: "a comment is not a setting", before: ptr("# vm.swappiness = 10\n"), props: map[string]any{"key": "vm.swappiness", "value": "10"},
		after: "# vm.swappiness = 10\nvm.swappiness = 10\n", changed: true},
	{name: "remove", before: ptr("a = 1\nb = 2\na=3\n"), props: map[string]any{"key": "a", "ensure": "absent"},
		after: "b = 2\n", changed: true},
	{name: "remove, not there", before: ptr("b = 2\n"), props: map[string]any{"key": "a", "ensure": "absent"}, after: "b = 2\n"},
	{name: "create the file", props: map[string]any{"key": "net.core.somaxconn", "value": "4096 é"},
		after: "net.core.somaxconn = 4096 é\n", changed: true},
}

// TestHost runs each example type in the host: validate, status, noop,
// apply and a second, stable apply, against files in a temp dir.
func TestHost(t *testing.T) {
	dir := examples(t)
	h, err := host.New(host.WithModules(map[string][]byte{
		"file_line":   readWasm(t, dir, "file_line"),
		"ini_setting": readWasm(t, dir, "ini_setting"),
		"sysctl_conf": readWasm(t, dir, "sysctl_conf"),
	}), host.WithCacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())

	for _, typ := range []struct {
		name  string
		cases []exampleCase
	}{{"ini_setting", iniCases}, {"file_line", lineCases}, {"sysctl_conf", sysctlCases}} {
		t.Run(typ.name, func(t *testing.T) {
			ctx := context.Background()
			start := time.Now()
			info, err := h.Info(ctx, trust.Caller{}, typ.name)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("compiled and described in %v", time.Since(start).Round(time.Millisecond))
			if info.ABI != abi.Version || info.Type != typ.name || info.DefaultEnsure != "present" {
				t.Fatalf("describe: %+v", info)
			}
			for _, tc := range typ.cases {
				t.Run(tc.name, func(t *testing.T) {
					runCase(t, h, typ.name, tc)
				})
			}
		})
	}
}

func runCase(t *testing.T, h *host.Host, typ string, tc exampleCase) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "conf")
	if tc.before != nil {
		if err := os.WriteFile(path, []byte(*tc.before), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	props := map[string]any{"path": path, "ensure": "present"}
	for k, v := range tc.props {
		props[k] = v
	}
	vr, err := h.Validate(ctx, trust.Caller{}, typ, []abi.ValidateRequest{{Properties: props}})
	if err != nil || len(vr) != 1 || len(vr[0].Errors) != 0 {
		t.Fatalf("validate: %v %+v", err, vr)
	}
	caller := trust.Caller{Resource: typ + "#t", Grants: trust.Chain{{FSRead: []string{dir + "/**"}, FSWrite: []string{dir + "/**"}}}}
	req := abi.Request{Type: typ, Name: "t", Properties: props, WorkingDir: dir}
	wantEnsure := "present"
	if props["ensure"] == "absent" {
		wantEnsure = "absent"
	}

	// noop: reports, changes nothing
	caller.Mode = trust.ModeNoop
	res, err := h.Apply(ctx, caller, req)
	if err != nil || res.Error != "" {
		t.Fatalf("noop apply: %v %q", err, res.Error)
	}
	if res.Changed != tc.changed || (tc.changed && !strings.HasPrefix(res.NoopMessage, "Would")) {
		t.Errorf("noop apply: changed %v, noop_message %q; want changed %v", res.Changed, res.NoopMessage, tc.changed)
	}
	checkFile(t, path, tc.before, 0o600)

	// apply
	caller.Mode = trust.ModeApply
	res, err = h.Apply(ctx, caller, req)
	if err != nil || res.Error != "" {
		t.Fatalf("apply: %v %q", err, res.Error)
	}
	if res.Changed != tc.changed || res.FinalEnsure != wantEnsure {
		t.Errorf("apply: changed %v final_ensure %q; want %v %q", res.Changed, res.FinalEnsure, tc.changed, wantEnsure)
	}
	mode := os.FileMode(0o600)
	if tc.before == nil {
		mode = 0o644
	}
	checkFile(t, path, &tc.after, mode)

	// stable
	res, err = h.Apply(ctx, caller, req)
	if err != nil || res.Error != "" || res.Changed {
		t.Errorf("second apply: %v %q changed %v; want no change", err, res.Error, res.Changed)
	}
	st, err := h.Status(ctx, caller, req)
	if err != nil || st.Error != "" || st.FinalEnsure != wantEnsure {
		t.Errorf("status: %v %q final_ensure %q; want %q", err, st.Error, st.FinalEnsure, wantEnsure)
	}
}

func checkFile(t *testing.T, path string, want *string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(path)
	if want == nil {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists (%v); want it absent", path, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != *want {
		t.Errorf("%s holds %q; want %q", path, b, *want)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != mode {
		t.Errorf("%s has mode %v; want %v", path, fi.Mode().Perm(), mode)
	}
}

// TestHostRefusals checks invalid properties, grants and read-only modes.
func TestHostRefusals(t *testing.T) {
	dir := examples(t)
	h, err := host.New(host.WithModules(map[string][]byte{
		"file_line":   readWasm(t, dir, "file_line"),
		"ini_setting": readWasm(t, dir, "ini_setting"),
		"sysctl_conf": readWasm(t, dir, "sysctl_conf"),
	}), host.WithCacheDir(""))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	inside, outside := t.TempDir(), t.TempDir()
	grant := trust.Chain{{FSRead: []string{inside + "/**"}, FSWrite: []string{inside + "/**"}}}

	for _, tc := range []struct {
		typ   string
		props map[string]any
		want  string
	}{
		{"ini_setting", map[string]any{"path": "etc/app.ini", "setting": "k", "value": "v"}, "path: must be an absolute path"},
		{"ini_setting", map[string]any{"path": "/x", "setting": "a=b", "value": "v"}, "setting: must be a non-empty name"},
		{"ini_setting", map[string]any{"path": "/x", "setting": "k"}, "value: required with ensure present"},
		{"ini_setting", map[string]any{"path": "/x", "setting": "k", "value": "a\nb"}, "value: must not contain a line break"},
		{"file_line", map[string]any{"path": "x", "line": "l"}, "path: must be an absolute path"},
		{"file_line", map[string]any{"path": "/x", "line": "a\nb"}, "line: must not contain a line break"},
		{"file_line", map[string]any{"path": "/x"}, "line: required"},
		{"sysctl_conf", map[string]any{"path": "x", "key": "k", "value": 1}, "path: must be an absolute path"},
		{"sysctl_conf", map[string]any{"path": "/x", "key": "a b", "value": 1}, "key: must be a sysctl name"},
		{"sysctl_conf", map[string]any{"path": "/x", "key": "k"}, "value: required with ensure present"},
		{"sysctl_conf", map[string]any{"path": "/x", "key": "k", "value": "a\nb"}, "value: must not contain a line break"},
	} {
		t.Run("validate "+tc.typ+" "+tc.want, func(t *testing.T) {
			vr, err := h.Validate(ctx, trust.Caller{}, tc.typ, []abi.ValidateRequest{{Properties: tc.props}})
			if err != nil || len(vr) != 1 || !strings.Contains(strings.Join(vr[0].Errors, "\n"), tc.want) {
				t.Fatalf("validate: %v %+v; want an error containing %q", err, vr, tc.want)
			}
			res, err := h.Apply(ctx, trust.Caller{Grants: grant}, abi.Request{Type: tc.typ, Name: "t", Properties: tc.props})
			if err != nil || !strings.Contains(res.Error, "invalid properties") {
				t.Fatalf("apply: %v %q; want invalid properties", err, res.Error)
			}
		})
	}

	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("[s]\nk = secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(inside, "link")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ   string
		props map[string]any
	}{
		{"ini_setting", map[string]any{"path": link, "section": "s", "setting": "k", "value": "v"}},
		{"file_line", map[string]any{"path": link, "line": "l"}},
		{"sysctl_conf", map[string]any{"path": link, "key": "k", "value": "v"}},
	} {
		t.Run(tc.typ+" a symlink planted in the grant", func(t *testing.T) {
			res, err := h.Apply(ctx, trust.Caller{Grants: trust.Chain{trust.All()}}, abi.Request{Type: tc.typ, Name: "t", Properties: tc.props})
			if err != nil || !strings.Contains(res.Error, link+" is not a regular file") {
				t.Fatalf("apply: %v %q; want a refusal naming the link", err, res.Error)
			}
			checkFile(t, secret, ptr("[s]\nk = secret\n"), 0o600)
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("the link was replaced (%v)", err)
			}
		})
	}

	target := filepath.Join(outside, "conf")
	for _, tc := range []struct {
		typ   string
		props map[string]any
	}{
		{"ini_setting", map[string]any{"path": target, "section": "s", "setting": "k", "value": "v"}},
		{"file_line", map[string]any{"path": target, "line": "l"}},
		{"sysctl_conf", map[string]any{"path": target, "key": "k", "value": "v"}},
	} {
		t.Run(tc.typ+" outside the grant", func(t *testing.T) {
			res, err := h.Apply(ctx, trust.Caller{Grants: grant}, abi.Request{Type: tc.typ, Name: "t", Properties: tc.props})
			if err != nil || !strings.Contains(res.Error, "denied: fs_read not granted for "+target) {
				t.Fatalf("apply: %v %q; want denied", err, res.Error)
			}
			if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s was created", target)
			}
		})
		t.Run(tc.typ+" write outside the grant", func(t *testing.T) {
			readOnly := trust.Chain{{FSRead: []string{"/**"}, FSWrite: []string{inside + "/**"}}}
			res, err := h.Apply(ctx, trust.Caller{Grants: readOnly}, abi.Request{Type: tc.typ, Name: "t", Properties: tc.props})
			if err != nil || !strings.Contains(res.Error, "denied: fs_write not granted for "+target) {
				t.Fatalf("apply: %v %q; want denied", err, res.Error)
			}
		})
		t.Run(tc.typ+" noop mode", func(t *testing.T) {
			// A request without noop from a noop caller: the host sets noop
			// (and would refuse the write even if the plugin ignored it).
			res, err := h.Apply(ctx, trust.Caller{Grants: trust.Chain{trust.All()}, Mode: trust.ModeNoop}, abi.Request{Type: tc.typ, Name: "t", Properties: tc.props})
			if err != nil || res.Error != "" || !res.Changed || res.NoopMessage == "" {
				t.Fatalf("noop apply: %v %+v", err, res)
			}
			if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%s was created in noop", target)
			}
		})
	}
}

// vendorTree copies examples/vendor into a temp dir with the built
// AssemblyScript and C plugins in vendor/plugins, as the walk-through in
// docs/plugins.md builds them, and returns the copy and a data root.
func vendorTree(t *testing.T, built string) (tree, root string) {
	t.Helper()
	tmp := t.TempDir()
	tree, root = filepath.Join(tmp, "vendor-example"), filepath.Join(tmp, "root")
	if err := os.CopyFS(tree, os.DirFS(filepath.Join(repoRoot(), "examples", "vendor"))); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tree, "vendor", "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"file_line", "ini_setting", "sysctl_conf"} {
		if err := os.WriteFile(filepath.Join(tree, "vendor", "plugins", typ+".wasm"), readWasm(t, built, typ), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tree, root
}

// editVendor rewrites the copied vendor manifest with old replaced by new.
func editVendor(t *testing.T, tree, old, new string) {
	t.Helper()
	path := filepath.Join(tree, "vendor", "manifest.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

const (
	wantINI  = "[server]\nport = 8080\n\n[log]\nlevel = info\n"
	wantMOTD = "This host runs the acme agent; its settings are managed by ccm.\n"
)

// TestVendorManifest runs examples/vendor through the ccm binary: the
// vendor's own plugin types, declared in its ccm.plugins, applied with
// allow_apply: false and grants.
func TestVendorManifest(t *testing.T) {
	built := examples(t)
	tree, root := vendorTree(t, built)
	ini, motd := filepath.Join(root, "app", "app.ini"), filepath.Join(root, "app", "motd")
	apply := func(t *testing.T, wantCode int, extra ...string) ccmtest.Result {
		t.Helper()
		args := append([]string{"apply", filepath.Join(tree, "manifest.yaml"), "--data", "root=" + root, "--detailed-exitcodes"}, extra...)
		res := ccmtest.Run(t, tree, nil, args...)
		if res.Code != wantCode {
			t.Fatalf("ccm %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.Code, wantCode, res.Stdout, res.Stderr)
		}
		return res
	}

	t.Run("converge", func(t *testing.T) {
		res := apply(t, 2)
		checkFile(t, ini, ptr(wantINI), 0o644)
		checkFile(t, motd, ptr(wantMOTD), 0o644)
		for _, want := range []string{"ini_setting#listen-port changed", "set [server] port = 8080 in " + ini, "file_line#motd-notice changed"} {
			if !strings.Contains(res.Stdout+res.Stderr, want) {
				t.Errorf("output lacks %q:\n%s%s", want, res.Stdout, res.Stderr)
			}
		}
	})
	t.Run("stable", func(t *testing.T) {
		apply(t, 0)
	})
	t.Run("noop reports a local edit and keeps it", func(t *testing.T) {
		edited := strings.Replace(wantINI, "8080", "9", 1)
		if err := os.WriteFile(ini, []byte(edited), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(ini, 0o640); err != nil {
			t.Fatal(err)
		}
		res := apply(t, 2, "--noop")
		if !strings.Contains(res.Stdout+res.Stderr, "Would have set [server] port = 8080") {
			t.Errorf("noop output lacks the noop message:\n%s%s", res.Stdout, res.Stderr)
		}
		checkFile(t, ini, &edited, 0o640)
		apply(t, 2)
		checkFile(t, ini, ptr(wantINI), 0o640) // the mode stays the file's
	})
	t.Run("sha256 pins", func(t *testing.T) {
		sum := sha256File(t, filepath.Join(tree, "vendor", "plugins", "ini_setting.wasm"))
		editVendor(t, tree, "    - plugins/ini_setting.wasm\n", "    - path: plugins/ini_setting.wasm\n      sha256: "+sum+"\n")
		apply(t, 0)
		bad := strings.Repeat("0", 64)
		editVendor(t, tree, sum, bad)
		if err := os.WriteFile(ini, nil, 0o640); err != nil {
			t.Fatal(err)
		}
		res := apply(t, 4) // the apply resource fails before its child runs anything
		if want := "ini_setting.wasm: sha256 mismatch: pinned " + bad; !strings.Contains(res.Stdout+res.Stderr, want) {
			t.Errorf("a wrong pin: output lacks %q:\n%s%s", want, res.Stdout, res.Stderr)
		}
		checkFile(t, ini, ptr(""), 0o640)
		editVendor(t, tree, bad, sum)
	})
	t.Run("a write outside the grant is refused", func(t *testing.T) {
		outside := filepath.Join(root, "outside.ini")
		editVendor(t, tree, "    - file_line:\n", "        - escape:\n            path: "+outside+"\n            setting: k\n            value: v\n    - file_line:\n")
		res := apply(t, 6) // changes (app.ini was emptied above) and a failure
		if want := "denied: fs_write not granted for " + outside; !strings.Contains(res.Stdout+res.Stderr, want) {
			t.Errorf("output lacks %q:\n%s%s", want, res.Stdout, res.Stderr)
		}
		if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written (%v)", outside, err)
		}
	})
}

// TestVendorManifestRust runs the Rust example from examples/vendor through
// the ccm binary: converged with a correct sha256 pin, refused with a wrong
// one, and a write outside the vendor's grant refused.
func TestVendorManifestRust(t *testing.T) {
	built := examples(t)
	tree, root := vendorTree(t, built)
	conf := filepath.Join(root, "app", "sysctl.conf")
	apply := func(t *testing.T, wantCode int) string {
		t.Helper()
		args := []string{"apply", filepath.Join(tree, "manifest.yaml"), "--data", "root=" + root, "--detailed-exitcodes"}
		res := ccmtest.Run(t, tree, nil, args...)
		if res.Code != wantCode {
			t.Fatalf("ccm %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.Code, wantCode, res.Stdout, res.Stderr)
		}
		return res.Stdout + res.Stderr
	}
	sum := sha256File(t, filepath.Join(tree, "vendor", "plugins", "sysctl_conf.wasm"))
	editVendor(t, tree, "    - plugins/sysctl_conf.wasm\n", "    - path: plugins/sysctl_conf.wasm\n      sha256: "+sum+"\n")

	t.Run("converge with a correct pin", func(t *testing.T) {
		out := apply(t, 2)
		checkFile(t, conf, ptr("net.core.somaxconn = 4096\n"), 0o644)
		for _, want := range []string{"sysctl_conf#agent-backlog changed", "set net.core.somaxconn = 4096 in " + conf} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		apply(t, 0)
	})
	t.Run("a wrong pin", func(t *testing.T) {
		bad := strings.Repeat("0", 64)
		editVendor(t, tree, sum, bad)
		defer editVendor(t, tree, bad, sum)
		if err := os.WriteFile(conf, []byte("net.core.somaxconn = 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out := apply(t, 4)
		if want := "sysctl_conf.wasm: sha256 mismatch: pinned " + bad; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
		checkFile(t, conf, ptr("net.core.somaxconn = 1\n"), 0o644)
	})
	t.Run("a write outside the grant is refused", func(t *testing.T) {
		outside := filepath.Join(root, "sysctl.conf")
		editVendor(t, tree, "    - sysctl_conf:\n", "    - sysctl_conf:\n        - escape:\n            path: "+outside+"\n            key: kernel.panic\n            value: 1\n")
		out := apply(t, 6) // the edited file is set back, and a failure
		if want := "denied: fs_write not granted for " + outside; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
		if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written (%v)", outside, err)
		}
		checkFile(t, conf, ptr("net.core.somaxconn = 4096\n"), 0o644)
	})
}
