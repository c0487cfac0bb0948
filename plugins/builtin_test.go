package plugins_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/plugins"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestModulesAreWasm(t *testing.T) {
	for _, name := range []string{"file.wasm", "exec.wasm"} {
		t.Run(name, func(t *testing.T) {
			b, err := fs.ReadFile(plugins.Modules(), name)
			if err != nil {
				t.Fatalf("embedded %s: %v; run go generate ./plugins", name, err)
			}
			if !bytes.HasPrefix(b, []byte("\x00asm")) {
				t.Fatalf("%s is not a wasm module", name)
			}
		})
	}
}

// newHost loads the embedded modules in the real host, as cmd/ccm does,
// with a compilation cache shared across test runs ($CCM_CACHE_DIR, else the
// user cache dir): a cold compile of both modules takes seconds.
func newHost(t *testing.T) *host.Host {
	t.Helper()
	h, err := host.New(host.WithFS(plugins.Modules()), host.WithCacheDir(cacheDir(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	start := time.Now()
	if err := h.Preload(context.Background(), trust.Caller{}, []string{"file", "exec"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("compile (or cache load) and describe of file and exec: %v", time.Since(start))
	return h
}

// TestBuiltinsInHost runs the built wasm modules through the real host on
// real files: the native tests prove the logic, this proves the build.
func TestBuiltinsInHost(t *testing.T) {
	switch {
	case testing.Short():
		t.Skip("compiles both plugins (seconds)")
	case raceEnabled:
		// The race detector has nothing to find here (one goroutine drives
		// the host) and makes wazero's compile take ~40 s cold.
		t.Skip("compiling wasm under the race detector takes ~40 s; run go test ./plugins without -race")
	}
	h := newHost(t)
	ctx := context.Background()
	dir := t.TempDir()
	target := filepath.Join(dir, "motd")
	props := map[string]any{"ensure": "present", "content": "hi\n", "owner": "0", "group": "0", "mode": "0640"}
	apply := func(mode trust.Mode, typ, name string, p map[string]any) abi.Result {
		t.Helper()
		res, err := h.Apply(ctx, trust.Caller{Resource: typ + "#" + name, Mode: mode},
			abi.Request{Type: typ, Name: name, Properties: p, WorkingDir: dir})
		if err != nil {
			t.Fatalf("%s#%s: %v", typ, name, err)
		}
		return res
	}

	info, err := h.Info(ctx, trust.Caller{}, "file")
	if err != nil || info.Type != "file" || info.ABI != abi.Version {
		t.Fatalf("file info %+v, %v", info, err)
	}
	resp, err := h.Validate(ctx, trust.Caller{}, "file", []abi.ValidateRequest{{Properties: map[string]any{"name": "rel", "contnet": "x"}}})
	if err != nil || len(resp) != 1 || !strings.Contains(strings.Join(resp[0].Errors, "\n"), `did you mean "content"?`) {
		t.Fatalf("validate %+v, %v", resp, err)
	}

	if os.Geteuid() != 0 {
		props["owner"], props["group"] = itoa(os.Getuid()), itoa(os.Getgid())
	}
	if res := apply(trust.ModeNoop, "file", target, props); res.NoopMessage != "Would have created the file" {
		t.Fatalf("noop %+v", res)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("noop created the file: %v", err)
	}
	if res := apply(trust.ModeApply, "file", target, props); !res.Changed || res.Error != "" || res.FinalEnsure != "present" {
		t.Fatalf("create %+v", res)
	}
	if b, _ := os.ReadFile(target); string(b) != "hi\n" {
		t.Fatalf("content %q", b)
	}
	const rounds = 200
	start := time.Now()
	for range rounds {
		if res := apply(trust.ModeApply, "file", target, props); res.Changed || res.Error != "" {
			t.Fatalf("stable %+v", res)
		}
	}
	t.Logf("stable file apply through the host: %v per call", time.Since(start)/rounds)

	marker := filepath.Join(dir, "ran")
	ex := map[string]any{"command": "/usr/bin/touch " + marker, "onlyif": "/usr/bin/test -d " + dir}
	if res := apply(trust.ModeNoop, "exec", "touch", ex); res.NoopMessage != "Would have executed" || res.Error != "" {
		t.Fatalf("exec noop (guard as probe) %+v", res)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("noop ran the command: %v", err)
	}
	if res := apply(trust.ModeApply, "exec", "touch", ex); !res.Changed || res.Error != "" {
		t.Fatalf("exec %+v", res)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("command did not run: %v", err)
	}
}

func cacheDir(t testing.TB) string {
	if d := os.Getenv("CCM_CACHE_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	return filepath.Join(d, "ccm", "test-wazero")
}

func itoa(n int) string { return strconv.Itoa(n) }

// BenchmarkStableFileApply is one ccm_apply of a stable file through the
// real host: the plugin's one stat (host-side sha256) plus the call overhead.
func BenchmarkStableFileApply(b *testing.B) {
	h, err := host.New(host.WithFS(plugins.Modules()), host.WithCacheDir(cacheDir(b)))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	dir := b.TempDir()
	target := filepath.Join(dir, "motd")
	if err := os.WriteFile(target, []byte("hi\n"), 0o640); err != nil {
		b.Fatal(err)
	}
	props := map[string]any{"ensure": "present", "content": "hi\n", "owner": itoa(os.Getuid()), "group": itoa(os.Getgid()), "mode": "0640"}
	req := abi.Request{Type: "file", Name: target, Properties: props}
	caller := trust.Caller{Resource: "file#" + target}
	if res, err := h.Apply(context.Background(), caller, req); err != nil || res.Changed || res.Error != "" {
		b.Fatalf("not stable: %+v, %v", res, err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := h.Apply(context.Background(), caller, req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestModulesFS: the embedded modules read as an fs.FS (Glob, Stat,
// ReadDir, ReadFile) and fs.ReadFile copies, while Lend, which the host
// uses, returns the embedded bytes themselves.
func TestModulesFS(t *testing.T) {
	fsys := plugins.Modules()
	want := []string{"archive.wasm", "exec.wasm", "file.wasm", "package.wasm", "scaffold.wasm", "service.wasm"}
	if got, err := fs.Glob(fsys, "*.wasm"); err != nil || !slices.Equal(got, want) {
		t.Fatalf("Glob = %v, %v; want %v", got, err, want)
	}
	lender, ok := fsys.(interface{ Lend(string) ([]byte, error) })
	if !ok {
		t.Fatal("Modules() has no Lend method: the host would copy every module")
	}
	lent, err := lender.Lend("file.wasm")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := lender.Lend("file.wasm")
	if &lent[0] != &again[0] {
		t.Fatal("Lend copied the module")
	}
	read, err := fs.ReadFile(fsys, "file.wasm")
	if err != nil || !bytes.Equal(read, lent) {
		t.Fatalf("ReadFile = %d bytes, %v; want the %d bytes Lend gives", len(read), err, len(lent))
	}
	if &read[0] == &lent[0] {
		t.Fatal("fs.ReadFile returned the embedded bytes, not a copy")
	}
	st, err := fs.Stat(fsys, "file.wasm")
	if err != nil || st.Size() != int64(len(lent)) || st.IsDir() || !st.Mode().IsRegular() {
		t.Fatalf("Stat = %v, %v", st, err)
	}
	d, err := fsys.Open(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for {
		es, err := d.(fs.ReadDirFile).ReadDir(3)
		for _, e := range es {
			names = append(names, e.Name())
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(names, want) {
		t.Fatalf("ReadDir in steps of 3 = %v, want %v", names, want)
	}
	for _, bad := range []string{"nope.wasm", "./file.wasm", "/file.wasm", "wasm/file.wasm"} {
		if _, err := fs.ReadFile(fsys, bad); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%q) = %v, want fs.ErrNotExist", bad, err)
		}
		if _, err := lender.Lend(bad); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Lend(%q) = %v, want fs.ErrNotExist", bad, err)
		}
	}
}

// BenchmarkStableFileBatch is the built-in file plugin's share of a warm
// stable run, in process: per op, one ccm_validate_batch and one
// ccm_apply_batch of 256 stable files (one stat each), as the engine sends
// them (WithBuiltins: no termination check; no state documents).
func BenchmarkStableFileBatch(b *testing.B) {
	h, callers, reqs, vreqs := stableFiles(b, 256, false)
	ctx := context.Background()
	run := func() {
		if _, err := h.Validate(ctx, trust.Caller{}, "file", vreqs); err != nil {
			b.Fatal(err)
		}
		res, err := h.ApplyBatch(ctx, callers, reqs, false)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Changed || r.Error != "" {
				b.Fatalf("not stable: %+v", r)
			}
		}
	}
	run()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
}

// TestSums: the recorded sums (wasm/SHA256SUMS, which the host trusts
// instead of hashing a built-in) are those of the embedded modules. A
// module rebuilt without `go generate ./plugins` fails here.
func TestSums(t *testing.T) {
	m := plugins.Modules()
	summer := m.(interface{ Sum(string) (string, bool) })
	entries, err := fs.ReadDir(m, ".")
	if err != nil || len(entries) == 0 {
		t.Fatalf("ReadDir: %v, %d entries", err, len(entries))
	}
	for _, e := range entries {
		b, err := fs.ReadFile(m, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		got, ok := summer.Sum(e.Name())
		if want := fmt.Sprintf("%x", sha256.Sum256(b)); !ok || got != want {
			t.Errorf("Sum(%s) = %q, %v; the module's sha256 is %s: run go generate ./plugins", e.Name(), got, ok, want)
		}
	}
	if _, ok := summer.Sum("nope.wasm"); ok {
		t.Error("Sum of a module that is not there")
	}
}

// BenchmarkStableFileValidate is the built-in file plugin's validation in a
// warm stable run, in process: per op, one ccm_validate_batch of 256 file
// resources as the engine sends them (every property spelled out, the name
// among them); ns/resource is what validating one costs, cpu-ns/resource
// the CPU (user + system) of the whole process for it, the guest's garbage
// collection included. (The SDK keeps what it validated, 65 536 values at
// most: past that many resources, the rest get no handle.)
func BenchmarkStableFileValidate(b *testing.B) {
	h, err := host.New(host.WithBuiltins(plugins.Modules()), host.WithCacheDir(cacheDir(b)))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()
	const n = 256
	vreqs := make([]abi.ValidateRequest, n)
	for i := range n {
		vreqs[i] = abi.ValidateRequest{Properties: map[string]any{
			"name": "/srv/files/f" + itoa(i) + ".txt", "ensure": "present", "content": "file " + itoa(i),
			"owner": "root", "group": "root", "mode": "0644",
		}}
	}
	run := func() {
		resps, err := h.Validate(ctx, trust.Caller{}, "file", vreqs)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range resps {
			if len(r.Errors) > 0 {
				b.Fatalf("invalid: %v", r.Errors)
			}
		}
	}
	run()
	cpu0 := cpuTime()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/resource")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*n), "cpu-ns/resource")
}

// stableFiles writes n files in a temp dir and returns a host with the
// built-ins and, for each file, the caller, apply request and validate
// request of a stable file resource as the engine sends them; withName
// puts the name among the properties too.
func stableFiles(b *testing.B, n int, withName bool) (*host.Host, []trust.Caller, []abi.Request, []abi.ValidateRequest) {
	h, err := host.New(host.WithBuiltins(plugins.Modules()), host.WithCacheDir(cacheDir(b)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close(context.Background()) })
	dir := b.TempDir()
	callers := make([]trust.Caller, n)
	reqs := make([]abi.Request, n)
	vreqs := make([]abi.ValidateRequest, n)
	for i := range n {
		target := filepath.Join(dir, "f"+itoa(i))
		content := "file " + itoa(i)
		if err := os.WriteFile(target, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		props := map[string]any{"ensure": "present", "content": content, "owner": itoa(os.Getuid()), "group": itoa(os.Getgid()), "mode": "0644"}
		if withName {
			props["name"] = target
		}
		callers[i] = trust.Caller{Resource: "file#" + target}
		reqs[i] = abi.Request{Type: "file", Name: target, Properties: props, NoState: true}
		vreqs[i] = abi.ValidateRequest{Properties: props}
	}
	return h, callers, reqs, vreqs
}

func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkStableFileApplyByHandle is the apply half of a warm stable run,
// in process: per op, one ccm_apply_batch of 256 stable files by the
// handles of their validation (which is not timed), as the engine sends
// them; ns/resource and cpu-ns/resource (the whole process) are the
// apply's only.
func BenchmarkStableFileApplyByHandle(b *testing.B) {
	const n = 256
	h, callers, reqs, vreqs := stableFiles(b, n, true)
	ctx := context.Background()
	var cpu, wall int64
	for b.Loop() {
		resps, err := h.Validate(ctx, trust.Caller{}, "file", vreqs)
		if err != nil {
			b.Fatal(err)
		}
		for i, r := range resps {
			if r.Handle == 0 {
				b.Fatalf("resource %d: no handle (%v)", i, r.Errors)
			}
			reqs[i].Handle = r.Handle
		}
		cpu0, start := cpuTime(), time.Now()
		res, err := h.ApplyBatch(ctx, callers, reqs, false)
		wall += time.Since(start).Nanoseconds()
		cpu += cpuTime() - cpu0
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Changed || r.Error != "" {
				b.Fatalf("not stable: %+v", r)
			}
		}
	}
	b.ReportMetric(float64(wall)/float64(b.N*n), "ns/resource")
	b.ReportMetric(float64(cpu)/float64(b.N*n), "cpu-ns/resource")
}
