package main

// End-to-end tests of honest runs (docs/manifests.md, "A missing value is
// an error"; docs/apply.md, "Exit status"): a template that reads a
// missing key fails where it is written and changes nothing; YAML errors
// point at the mistake; --detailed-exitcodes never reports a run that did
// not start as "changes".

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/internal/testing/fstree"
)

// honestDir writes manifest (with @DIR@ replaced by a fresh directory)
// as DIR/m.yaml plus a file DIR/work/keep, and returns DIR.
func honestDir(t *testing.T, manifest string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "work", "keep"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(strings.ReplaceAll(manifest, "@DIR@", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

var honestEnv = []string{"CCM_FACTS_DIRS="}

// TestMissingDataInAStaticField is the issue's `{{ Data.root }}/x`: with
// no root the name used to render as "/x". Now every mode refuses to load
// the manifest, names the line, the expression and the key, and the tree
// is untouched.
func TestMissingDataInAStaticField(t *testing.T) {
	dir := honestDir(t, `data:
  base: /srv
ccm:
  resources:
    - file:
        - "{{ Data.root }}@DIR@/x":
            ensure: present
            content: hi
            owner: root
            group: root
            mode: "0644"
`)
	before := fstree.Describe(t, dir)
	want := "ccm: error: " + dir + `/m.yaml:6: file#{{ Data.root }}` + dir + `/x: name: expression "Data.root": Data has no key "root"; it has base; if it may be missing, write lookup("data.root", DEFAULT) or Data.root ?? DEFAULT` + "\n"
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"apply", "m.yaml"}, 2},
		{[]string{"apply", "m.yaml", "--noop"}, 2},
		{[]string{"apply", "m.yaml", "--render"}, 2},
		{[]string{"apply", "m.yaml", "--detailed-exitcodes"}, 1},
	} {
		res := ccmtest.Run(t, dir, honestEnv, tc.args...)
		if res.Code != tc.code || res.Stderr != want {
			t.Errorf("ccm %s: exit %d, want %d\nstderr:\n%s\nwant:\n%s", strings.Join(tc.args, " "), res.Code, tc.code, res.Stderr, want)
		}
		if tc.args[len(tc.args)-1] != "--render" && res.Stdout != "" {
			t.Errorf("ccm %s printed %q; nothing ran", strings.Join(tc.args, " "), res.Stdout)
		}
	}
	if after := fstree.Describe(t, dir); after != before {
		t.Fatal("the tree changed although the manifest did not load")
	}

	res := ccmtest.Run(t, dir, honestEnv, "apply", "m.yaml", "--json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil || res.Code != 2 {
		t.Fatalf("--json: exit %d, stdout is not one JSON document (%v):\n%s", res.Code, err, res.Stdout)
	}
	if doc["file"] != dir+"/m.yaml" || doc["line"] != 6.0 || !strings.Contains(doc["error"].(string), `Data has no key "root"`) {
		t.Fatalf("--json load error document: %v", doc)
	}
}

// TestMissingDataInADeferredField is the issue's `rm -rf /srv/work/` built
// from a missing subdir: the command fails its own resource (the others
// run), nothing is removed, and --render shows the template as written
// with a warning instead of the dangerous command.
func TestMissingDataInADeferredField(t *testing.T) {
	dir := honestDir(t, `data:
  empty: ~
ccm:
  resources:
    - exec:
        - cleanup:
            command: "rm -rf @DIR@/work/{{ Data.subdir }}/"
    - exec:
        - null-is-empty:
            command: "touch @DIR@/null{{ Data.empty }}"
`)
	wantErr := dir + `/m.yaml:6: command: expression \"Data.subdir\": Data has no key \"subdir\"; it has empty; if it may be missing, write lookup(\"data.subdir\", DEFAULT) or Data.subdir ?? DEFAULT`

	res := ccmtest.Run(t, dir, honestEnv, "apply", "m.yaml", "--noop")
	if res.Code != 1 || !strings.Contains(res.Stdout, "exec#cleanup failed") || !strings.Contains(res.Stdout, wantErr) {
		t.Fatalf("--noop: exit %d, want 1 and the failure\n%s%s", res.Code, res.Stdout, res.Stderr)
	}

	res = ccmtest.Run(t, dir, honestEnv, "apply", "m.yaml", "--render")
	if res.Code != 0 || strings.Contains(res.Stdout, dir+"/work/ ") || !strings.Contains(res.Stdout, "command: rm -rf "+dir+"/work/{{ Data.subdir }}/") {
		t.Fatalf("--render: exit %d, want the command as written\n%s", res.Code, res.Stdout)
	}
	if !strings.Contains(res.Stderr, `Data has no key "subdir"`) || !strings.Contains(res.Stderr, "a run fails this resource") {
		t.Fatalf("--render: no warning about the deferred field:\n%s", res.Stderr)
	}

	res = ccmtest.Run(t, dir, honestEnv, "apply", "m.yaml")
	if res.Code != 1 || !strings.Contains(res.Stdout, wantErr) || !strings.Contains(res.Stdout, "exec#null-is-empty changed") {
		t.Fatalf("apply: exit %d, want 1, the failure and the other resource run\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "work", "keep")); err != nil {
		t.Fatalf("work/keep is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "null")); err != nil {
		t.Fatalf("a null value did not render as empty: %v", err)
	}
}

// TestYAMLErrorThroughTheBinary: a bad indentation is reported at its own
// line and column with the source under a caret (yaml/v3 alone says line
// 3), and --json prints one document with the position.
func TestYAMLErrorThroughTheBinary(t *testing.T) {
	dir := honestDir(t, "ccm:\n  resources:\n    - file:\n        - /tmp/x:\n            ensure: present\n           mode: x\n")
	res := ccmtest.Run(t, dir, honestEnv, "apply", "m.yaml", "--detailed-exitcodes")
	want := "ccm: error: " + dir + `/m.yaml:6:12: invalid YAML: value is not allowed in this context; check the indentation: keys of one map line up, list items start with "- " at the same column
5 |             ensure: present
6 |            mode: x
  |            ^
`
	if res.Code != 1 || res.Stderr != want {
		t.Fatalf("exit %d, want 1\nstderr:\n%s\nwant:\n%s", res.Code, res.Stderr, want)
	}
	res = ccmtest.Run(t, dir, honestEnv, "apply", "m.yaml", "--json")
	var doc struct {
		Error, File, Excerpt string
		Line, Column         int
	}
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, res.Stdout)
	}
	if doc.File != dir+"/m.yaml" || doc.Line != 6 || doc.Column != 12 || !strings.HasSuffix(doc.Excerpt, "  |            ^") || strings.Contains(doc.Error, "\n") {
		t.Fatalf("document: %+v", doc)
	}
}

// TestFlagsAndExitCodes: flag values are checked, usage errors are 1
// under --detailed-exitcodes, and the global log flags work before the
// subcommand.
func TestFlagsAndExitCodes(t *testing.T) {
	dir := honestDir(t, "ccm:\n  resources:\n    - exec:\n        - \"true\": {}\n")
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"apply", "m.yaml", "--color", "bogus"}, 2, `invalid argument "bogus" for "--color" flag: "bogus" is not a colour mode; use auto, always or never`},
		{[]string{"apply", "m.yaml", "--color", "bogus", "--detailed-exitcodes"}, 1, "not a colour mode"},
		{[]string{"apply", "m.yaml", "--detailed-exitcodes", "--data", "@nope.yaml"}, 1, "ccm: error:"},
		{[]string{"apply", "nope.yaml", "--detailed-exitcodes"}, 1, "cannot read manifest"},
		{[]string{"apply", "m.yaml", "--no-such-flag", "--detailed-exitcodes"}, 1, "unknown flag"},
		{[]string{"--debug", "apply", "m.yaml", "--color", "never"}, 0, ""},
		{[]string{"--info", "apply", "m.yaml", "--detailed-exitcodes"}, 2, ""},
	} {
		res := ccmtest.Run(t, dir, honestEnv, tc.args...)
		if res.Code != tc.code || (tc.stderr == "") != (res.Stderr == "") || !strings.Contains(res.Stderr, tc.stderr) {
			t.Errorf("ccm %s: exit %d, want %d\nstderr: %s\nwant it to contain: %s", strings.Join(tc.args, " "), res.Code, tc.code, res.Stderr, tc.stderr)
		}
	}
}

// TestMissingVariableInAConfinedScope: a scope confined by --grants sees no
// environment, and the error says so instead of suggesting a typo.
func TestMissingVariableInAConfinedScope(t *testing.T) {
	dir := honestDir(t, `ccm:
  resources:
    - file:
        - @DIR@/work/home:
            ensure: present
            content: "{{ Environ.HOME }}"
            owner: root
            group: root
            mode: "0644"
`)
	if err := os.WriteFile(filepath.Join(dir, "grants.yaml"), []byte(strings.ReplaceAll("fs_read: [\"@DIR@/**\"]\nfs_write: [\"@DIR@/**\"]\nusers: true\n", "@DIR@", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	res := ccmtest.Run(t, dir, honestEnv, "apply", "m.yaml", "--grants", "grants.yaml")
	want := `Environ has no key \"HOME\"; if it may be missing, write lookup(\"environ.HOME\", DEFAULT) or Environ.HOME ?? DEFAULT (this manifest's scope is confined by grants and sees no environment variables)`
	if res.Code != 1 || !strings.Contains(res.Stdout, want) {
		t.Fatalf("exit %d, want 1 and the confined hint\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "work", "home")); err == nil {
		t.Fatal("the file was written with an empty HOME")
	}
}
