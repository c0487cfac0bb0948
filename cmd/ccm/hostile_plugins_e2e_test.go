package main

// Containment of third-party plugins across trust scopes, through the ccm
// binary as root (docs/security.md, "Plugins"). The threat: a vendor
// manifest applied with allow_apply: false and a narrow grant, declaring a
// pinned hostile plugin (testdata/plugins/hostile). Each test hashes a
// sentinel tree outside every grant before and after the run.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/internal/testing/fstree"
)

// hostileModule returns hostile.wasm, its describe attack set to attack
// ("spin", "output", "alloc"; "" = none), and its sha256.
func hostileModule(t *testing.T, attack string) ([]byte, string) {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "plugins", "hostile", "hostile.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if attack != "" {
		marker := []byte("describe:none___")
		if bytes.Count(wasm, marker) != 1 {
			t.Fatalf("hostile.wasm lacks %q; rebuild it (go generate ./testdata/plugins/...)", marker)
		}
		wasm = bytes.Replace(wasm, marker, []byte("describe:"+attack+strings.Repeat("_", 7-len(attack))), 1)
	}
	sum := sha256.Sum256(wasm)
	return wasm, hex.EncodeToString(sum[:])
}

func writeBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHostilePluginFilesOutsideGrant (class 7): the vendor declares plugin
// files outside its fs_read grant (an existing module with a wrong pin, a
// missing file, a FIFO, a symlink planted in its own tree): each is refused
// with the same words, no digest and no hint of what is there, and nothing
// blocks. Inside the grant a wrong pin names both digests and a FIFO is
// refused at once. The root manifest grants the vendor its own plugin
// files with a relative glob.
func TestHostilePluginFilesOutsideGrant(t *testing.T) {
	dir := t.TempDir()
	sent := filepath.Join(dir, "sentinel")
	sentinelTree(t, sent)
	wasm, sum := hostileModule(t, "")
	secret, secretSum := hostileModule(t, "alloc") // other bytes, another digest
	writeBytes(t, filepath.Join(sent, "plugin.wasm"), secret)
	mkfifo(t, filepath.Join(dir, "outside", "fifo.wasm"))
	writeBytes(t, filepath.Join(dir, "vendor", "plugins", "hostile.wasm"), wasm)
	mkfifo(t, filepath.Join(dir, "vendor", "plugins", "fifo.wasm"))
	if err := os.Symlink(filepath.Join(sent, "plugin.wasm"), filepath.Join(dir, "vendor", "plugins", "link.wasm")); err != nil {
		t.Fatal(err)
	}
	before := fstree.Describe(t, sent)
	bad := strings.Repeat("0", 64)

	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - apply:
        - vendor/outside.yaml:
            allow_apply: false
            grants: {fs_read: ["vendor/plugins/*.wasm", "@DIR@/vendor/work/**"], fs_write: ["@DIR@/vendor/work/**"]}
        - vendor/inside.yaml:
            allow_apply: false
            grants: {fs_read: ["vendor/plugins/*.wasm"]}
    - file:
        - @DIR@/after: {ensure: present, content: "x", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	writeManifest(t, dir, "vendor/outside.yaml", `
ccm:
  plugins:
    - {path: ../sentinel/plugin.wasm, sha256: "`+bad+`"}
    - {path: ../sentinel/missing.wasm, sha256: "`+bad+`"}
    - {path: ../outside/fifo.wasm}
    - {path: plugins/link.wasm, sha256: "`+bad+`"}
  resources:
    - file:
        - @DIR@/vendor/work/never: {ensure: present, content: "x", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	writeManifest(t, dir, "vendor/inside.yaml", `
ccm:
  plugins:
    - {path: plugins/hostile.wasm, sha256: "`+bad+`"}
    - {path: plugins/fifo.wasm}
  resources:
    - file:
        - @DIR@/vendor/work/never: {ensure: present, content: "x", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	ccmtest.Binary(t) // built before the clock starts
	start := time.Now()
	out, res := applyJSON(t, dir, "m.yaml")
	took := time.Since(start)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if took > 30*time.Second {
		t.Errorf("the run took %v", took)
	}
	msg := strings.Join(out.event(t, "apply#vendor/outside.yaml").Error, "\n")
	denied := func(rel string) string {
		return "plugin " + filepath.Join(dir, rel) + ": denied: fs_read not granted; a manifest's ccm.plugins are read through its scope's grant: add the file to fs_read in the grants of the apply that runs " + filepath.Join(dir, "vendor", "outside.yaml")
	}
	for _, rel := range []string{"sentinel/plugin.wasm", "sentinel/missing.wasm", "outside/fifo.wasm", "vendor/plugins/link.wasm"} {
		if !strings.Contains(msg, denied(rel)) {
			t.Errorf("outside.yaml: %s\nlacks %s", msg, denied(rel))
		}
	}
	if strings.Contains(res.Stdout+res.Stderr, secretSum) {
		t.Errorf("the output shows the digest of a module outside the grant")
	}
	for _, leak := range []string{"no such file", "not a regular file", "mismatch"} {
		if strings.Contains(msg, leak) {
			t.Errorf("outside.yaml's error says %q about a file outside the grant:\n%s", leak, msg)
		}
	}
	msg = strings.Join(out.event(t, "apply#vendor/inside.yaml").Error, "\n")
	for _, want := range []string{
		"plugin " + filepath.Join(dir, "vendor/plugins/hostile.wasm") + ": sha256 mismatch: pinned " + bad + ", the file has " + sum,
		"plugin " + filepath.Join(dir, "vendor/plugins/fifo.wasm") + ": not a regular file",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("inside.yaml: %s\nlacks %s", msg, want)
		}
	}
	if e := out.event(t, "file#"+filepath.Join(dir, "after")); e.Failed {
		t.Errorf("the run did not carry on: %v", e.Error)
	}
	if after := fstree.Describe(t, sent); after != before {
		t.Error("the sentinel tree changed")
	}
}

// TestHostilePluginScopesDoNotShareInstances (class 8): two sibling applies
// declare the same plugin bytes. Scope A may read a secret; the plugin
// keeps it in its memory; scope B may write only its own directory, and
// there the plugin writes whatever it kept. B must find nothing.
func TestHostilePluginScopesDoNotShareInstances(t *testing.T) {
	dir := t.TempDir()
	sent := filepath.Join(dir, "sentinel")
	sentinelTree(t, sent)
	wasm, sum := hostileModule(t, "")
	writeBytes(t, filepath.Join(dir, "vendor", "plugins", "hostile.wasm"), wasm)
	writeBytes(t, filepath.Join(dir, "a", "secret"), []byte("s3cret-of-a"))
	if err := os.MkdirAll(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := fstree.Describe(t, sent)
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - apply:
        - vendor/a.yaml:
            allow_apply: false
            grants: {fs_read: ["vendor/plugins/*.wasm", "a/**"]}
        - vendor/b.yaml:
            allow_apply: false
            grants: {fs_read: ["vendor/plugins/*.wasm", "b/**"], fs_write: ["b/**"]}
`)
	for _, m := range []struct{ name, res string }{
		{"a", `stash: {attack: stash, path: "@DIR@/a/secret"}`},
		{"b", `leak: {attack: leak_stash, path: "@DIR@/b/leak"}`},
	} {
		writeManifest(t, dir, "vendor/"+m.name+".yaml", `
ccm:
  plugins:
    - {path: plugins/hostile.wasm, sha256: "`+sum+`"}
  resources:
    - hostile:
        - `+m.res+`
`)
	}
	out, res := applyJSON(t, dir, "m.yaml")
	if res.Code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, ref := range []string{"hostile#stash", "hostile#leak"} {
		if e := out.event(t, ref); e.Failed {
			t.Fatalf("%s: %v", ref, e.Error)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "b", "leak"))
	if err != nil || string(got) != "stashed:" {
		t.Fatalf("scope B wrote %q (%v): the plugin instance crossed from scope A's grant to B's", got, err)
	}
	if after := fstree.Describe(t, sent); after != before {
		t.Error("the sentinel tree changed")
	}
}

// TestHostilePluginLimitsOnEveryCall (class 9): the scope's limits hold for
// ccm_describe (when ccm.plugins registers the module) and ccm_validate
// (when the manifest loads), not only for ccm_apply. The host's own limits
// are the defaults (60 s, 16 MiB, 256 MiB), so only the scope's can stop
// these within the test's time.
func TestHostilePluginLimitsOnEveryCall(t *testing.T) {
	dir := t.TempDir()
	sent := filepath.Join(dir, "sentinel")
	sentinelTree(t, sent)
	before := fstree.Describe(t, sent)
	wasm, sum := hostileModule(t, "")
	writeBytes(t, filepath.Join(dir, "vendor", "plugins", "hostile.wasm"), wasm)
	spin, spinSum := hostileModule(t, "spin")
	writeBytes(t, filepath.Join(dir, "vendor", "plugins", "describe-spin.wasm"), spin)

	cases := []struct {
		name, limits, plugin, pin, attack, want string
	}{
		{"describe_spin", "{call_timeout: 1s}", "describe-spin.wasm", spinSum, "",
			`plugin for type "describe-spin": ccm_describe: exceeded the call_timeout limit of 1s`},
		{"validate_spin", "{call_timeout: 1s}", "hostile.wasm", sum, "validate_spin",
			`plugin for type "hostile": ccm_validate: exceeded the call_timeout limit of 1s`},
		{"validate_output", "{output_bytes: 1MiB}", "hostile.wasm", sum, "validate_output_100mib",
			`plugin for type "hostile": ccm_validate output of 104857600 bytes exceeded the output_bytes limit of 1048576`},
		{"validate_alloc", "{memory_mb: 32}", "hostile.wasm", sum, "validate_alloc_4gib",
			"exceeded the memory_mb limit of 32 MiB"},
	}
	var m strings.Builder
	m.WriteString("ccm:\n  resources:\n    - apply:\n")
	for _, c := range cases {
		m.WriteString("        - vendor/" + c.name + ".yaml:\n            allow_apply: false\n")
		m.WriteString("            grants: {fs_read: [\"vendor/plugins/*.wasm\"]}\n")
		m.WriteString("            limits: " + c.limits + "\n")
		res := "resources:\n    - file:\n        - @DIR@/vendor/work/never: {ensure: present, content: x, owner: \"@USER@\", group: \"@GROUP@\", mode: \"0644\"}"
		if c.attack != "" {
			res = "resources:\n    - hostile:\n        - x: {attack: " + c.attack + "}"
		}
		writeManifest(t, dir, "vendor/"+c.name+".yaml", "ccm:\n  plugins:\n    - {path: plugins/"+c.plugin+", sha256: \""+c.pin+"\"}\n  "+res+"\n")
	}
	m.WriteString("    - file:\n        - @DIR@/after: {ensure: present, content: \"x\", owner: \"@USER@\", group: \"@GROUP@\", mode: \"0644\"}\n")
	writeManifest(t, dir, "m.yaml", m.String())

	ccmtest.Binary(t) // built before the clock starts
	start := time.Now()
	out, res := applyJSON(t, dir, "m.yaml")
	took := time.Since(start)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	t.Logf("ccm apply took %v", took)
	if took > 45*time.Second {
		t.Errorf("the run took %v: a limit was not applied", took)
	}
	for _, c := range cases {
		e := out.event(t, "apply#vendor/"+c.name+".yaml")
		if msg := strings.Join(e.Error, " "); !e.Failed || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %v\nwant %s", c.name, msg, c.want)
		}
	}
	if e := out.event(t, "file#"+filepath.Join(dir, "after")); e.Failed {
		t.Errorf("the run did not carry on: %v", e.Error)
	}
	if after := fstree.Describe(t, sent); after != before {
		t.Error("the sentinel tree changed")
	}
}

// TestOperatorPluginDirFIFO: a FIFO named TYPE.wasm in an operator plugin
// directory neither hangs `ccm plugin list` nor a run using the type.
func TestOperatorPluginDirFIFO(t *testing.T) {
	dir := t.TempDir()
	op := filepath.Join(dir, "op")
	mkfifo(t, filepath.Join(op, "fifo.wasm"))
	env := []string{"CCM_PLUGIN_PATH=" + op}
	res, took := runCCM(t, dir, env, "plugin", "list")
	if took > 20*time.Second || !strings.Contains(res.Stdout+res.Stderr, "not a regular file") {
		t.Errorf("plugin list (%v, exit %d):\n%s\n%s", took, res.Code, res.Stdout, res.Stderr)
	}
	writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - fifo:\n        - x: {}\n")
	res, took = runCCM(t, dir, env, "apply", "m.yaml")
	if res.Code != 2 || !strings.Contains(res.Stderr, filepath.Join(op, "fifo.wasm")+": not a regular file") {
		t.Errorf("apply (%v, exit %d):\n%s\n%s", took, res.Code, res.Stdout, res.Stderr)
	}
}
