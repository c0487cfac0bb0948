package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// TestApplyGrantsFile: --grants confines the root scope; a refused host call
// fails only its resource, names the capability and the path, and changes
// nothing outside the grant.
func TestApplyGrantsFile(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"allowed", "outside"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeManifest(t, dir, "grants.yaml", `
fs_read: ["@DIR@/**"]
fs_write: ["@DIR@/allowed/**"]
exec: ["/usr/bin/true", "/bin/true"]
users: true
`)
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - file:
        - defaults: {ensure: present, owner: "@USER@", group: "@GROUP@", mode: "0644", content: "x"}
        - @DIR@/allowed/in: {}
        - @DIR@/outside/out: {}
    - exec:
        - /bin/true: {}
        - touch @DIR@/allowed/touched: {}
`)
	out, res := applyJSON(t, dir, "m.yaml", "--grants", "grants.yaml")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", res.Code, res.Stderr)
	}
	if e := out.event(t, "file#"+dir+"/allowed/in"); e.Failed || !e.Changed {
		t.Errorf("granted write: %+v", e)
	}
	e := out.event(t, "file#"+dir+"/outside/out")
	if !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "fs_write not granted") || !strings.Contains(strings.Join(e.Error, " "), dir+"/outside/out") {
		t.Errorf("refused write should name the capability and path: %v", e.Error)
	}
	if e := out.event(t, "exec#/bin/true"); e.Failed {
		t.Errorf("granted exec failed: %v", e.Error)
	}
	if e := out.event(t, "exec#touch "+dir+"/allowed/touched"); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "exec") {
		t.Errorf("ungranted exec: %+v", e)
	}
	for _, f := range []string{"outside/out", "allowed/touched"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists although it was not granted", f)
		}
	}
}

func TestApplyGrantsFileErrors(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n")
	writeManifest(t, dir, "bad.yaml", "fs_wrte: [/tmp]\n")
	for args, want := range map[string]string{
		"missing.yaml": "--grants",
		"bad.yaml":     "unknown field",
	} {
		res := ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--grants", args)
		if res.Code != 2 || !strings.Contains(res.Stderr, want) {
			t.Errorf("--grants %s: exit %d, stderr %q; want 2 and %q", args, res.Code, res.Stderr, want)
		}
	}
}
