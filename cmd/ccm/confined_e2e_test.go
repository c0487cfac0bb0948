package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVendorTemplatesConfined: a vendor manifest applied with grants cannot
// use its templates to do what its plugins may not: readFile of a file
// outside its fs_read grant fails that resource and the apply, and
// Environ is empty, so the operator's environment does not leak into what
// the vendor writes. The operator's own manifest keeps both.
func TestVendorTemplatesConfined(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shadow"), []byte("root:$6$secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - file:
        - @DIR@/operator-env: {content: "{{ lookup('environ.CCM_TEST_SECRET', 'none') }}", owner: "@USER@", group: "@GROUP@", mode: "0600"}
    - apply:
        - vendor/reader.yaml:
            allow_apply: false
            grants: {fs_read: ["@DIR@/vendor/**"], fs_write: ["@DIR@/vendor/**"], users: true}
        - vendor/env.yaml:
            allow_apply: false
            grants: {fs_read: ["@DIR@/vendor/**"], fs_write: ["@DIR@/vendor/**"], users: true}
`)
	writeManifest(t, dir, "vendor/reader.yaml", `
ccm:
  resources:
    - file:
        - @DIR@/vendor/stolen: {content: "{{ readFile('../shadow') }}", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	writeManifest(t, dir, "vendor/env.yaml", `
ccm:
  resources:
    - file:
        - @DIR@/vendor/env: {content: "{{ lookup('environ.CCM_TEST_SECRET', 'none') }}", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	out, res := applyJSONEnv(t, dir, []string{"CCM_TEST_SECRET=hunter2"}, "m.yaml")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (the reader's apply fails)\n%s", res.Code, res.Stderr)
	}
	// content is deferred (expanded just before the resource runs), so it
	// is that resource which fails, and the apply with it.
	e := out.event(t, "file#"+filepath.Join(dir, "vendor", "stolen"))
	if !e.Failed || !strings.Contains(strings.Join(e.Error, " "), `readFile "../shadow": denied: fs_read not granted for `+filepath.Join(dir, "shadow")) {
		t.Fatalf("the stealing resource: %+v", e)
	}
	if e := out.event(t, "apply#vendor/reader.yaml"); !e.Failed {
		t.Fatalf("reader apply: %+v", e)
	}
	if _, err := os.Stat(filepath.Join(dir, "vendor", "stolen")); !os.IsNotExist(err) {
		t.Fatalf("vendor/stolen exists (%v): the template read outside the grant", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "vendor", "env")); string(b) != "none" {
		t.Fatalf("vendor/env = %q: the vendor saw the operator's environment", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "operator-env")); string(b) != "hunter2" {
		t.Fatalf("operator-env = %q: the operator's scope lost its environment", b)
	}
}
