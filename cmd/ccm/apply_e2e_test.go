package main

import (
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/session"
)

// me returns the invoking user's name and primary group, for file owner/group.
func me(t *testing.T) (string, string) {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		t.Fatal(err)
	}
	return u.Username, g.Name
}

// writeManifest writes a manifest into dir; in body, @DIR@ is dir, @USER@
// the invoking user and @GROUP@ their primary group.
func writeManifest(t *testing.T, dir, name, body string) string {
	t.Helper()
	u, g := me(t)
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	body = strings.NewReplacer("@DIR@", dir, "@USER@", u, "@GROUP@", g).Replace(body)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type runOutput struct {
	Events  []*session.Event `json:"events"`
	Summary session.Summary  `json:"summary"`
}

// applyJSON runs `ccm apply --json` and decodes its output.
func applyJSON(t *testing.T, dir string, args ...string) (runOutput, ccmtest.Result) {
	t.Helper()
	res := ccmtest.Run(t, dir, nil, append([]string{"apply", "--json"}, args...)...)
	var out runOutput
	if res.Code == 0 || res.Code == 1 {
		if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
			t.Fatalf("decoding --json output: %v\nstdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
		}
	}
	return out, res
}

func (o runOutput) event(t *testing.T, ref string) *session.Event {
	t.Helper()
	var found *session.Event
	for _, e := range o.Events {
		if e.Ref() == ref {
			found = e
		}
	}
	if found == nil {
		var refs []string
		for _, e := range o.Events {
			refs = append(refs, e.Ref())
		}
		t.Fatalf("no event for %s in %v", ref, refs)
	}
	return found
}

func TestApplyExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		args     []string
		want     int
		stderr   string
	}{
		{"all good", "ccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n", nil, 0, ""},
		{"a failure exits 1", "ccm:\n  resources:\n    - exec:\n        - /bin/false: {}\n        - /bin/true: {}\n", nil, 1, ""},
		{"fail_on_error still exits 1", "ccm:\n  fail_on_error: true\n  resources:\n    - exec:\n        - /bin/false: {}\n", nil, 1, ""},
		{"load error exits 2", "ccm:\n  resources:\n    - exec:\n        - /bin/true: {bogus: 1}\n", nil, 2, "exec#/bin/true"},
		{"unknown top-level key exits 2", "bogus: 1\nccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n", nil, 2, "bogus"},
		{"noop with monitor-only is a usage error", "ccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n", []string{"--noop", "--monitor-only"}, 2, "cannot be combined"},
		{"detailed: changes", "ccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n", []string{"--detailed-exitcodes"}, 2, ""},
		{"detailed: failures and changes", "ccm:\n  resources:\n    - exec:\n        - /bin/false: {}\n        - /bin/true: {}\n", []string{"--detailed-exitcodes"}, 6, ""},
		{"detailed: failures only", "ccm:\n  resources:\n    - exec:\n        - /bin/false: {}\n", []string{"--detailed-exitcodes"}, 4, ""},
		{"detailed: nothing to do", "ccm:\n  resources:\n    - exec:\n        - /bin/true: {creates: /}\n", []string{"--detailed-exitcodes"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeManifest(t, dir, "m.yaml", tt.manifest)
			res := ccmtest.Run(t, dir, nil, append([]string{"apply", "m.yaml"}, tt.args...)...)
			if res.Code != tt.want {
				t.Fatalf("exit = %d, want %d\nstdout:\n%s\nstderr:\n%s", res.Code, tt.want, res.Stdout, res.Stderr)
			}
			if tt.stderr != "" && !strings.Contains(res.Stderr, tt.stderr) {
				t.Fatalf("stderr %q does not mention %q", res.Stderr, tt.stderr)
			}
		})
	}
}

func TestApplyLoadErrorChangesNothing(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - file:
        - @DIR@/created:
            ensure: present
            content: "x"
            owner: @USER@
            group: @GROUP@
            mode: "0644"
    - exec:
        - touch @DIR@/touched: {}
    - file:
        - @DIR@/invalid:
            ensure: present
            mode: "1777"
            owner: @USER@
            group: @GROUP@
`)
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml")
	if res.Code != 2 {
		t.Fatalf("exit = %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "m.yaml:14: file#"+dir+"/invalid") {
		t.Fatalf("error does not say file:line type#name: %s", res.Stderr)
	}
	for _, f := range []string{"created", "touched"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists although the manifest did not load", f)
		}
	}
}

func TestApplyOutputLines(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", `
ccm:
  pre_message: starting {{ Data.x }}
  post_message: all done
  resources:
    - exec:
        - ok:
            command: /bin/true
            alias: truthy
        - bad:
            command: /bin/false
        - needs-bad:
            command: /bin/true
            require: [exec#bad]
data:
  x: now
`)
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml")
	if res.Code != 1 {
		t.Fatalf("exit = %d", res.Code)
	}
	for _, want := range []string{
		"starting now",
		"Executing manifest manifest=m.yaml resources=3",
		"WARN  exec#truthy (alias) changed",
		"ERROR exec#bad failed",
		"errors=\"exit code 1 not in allowed returns [0]\"",
		"ERROR exec#needs-bad skipped due to unmet requirement",
		"unmet=exec#bad",
		"Manifest Run Summary",
		"Total Resources: 3",
		"Unmet Requirements: 1",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.Stdout)
		}
	}
	if strings.Contains(res.Stdout, "all done") {
		t.Error("post_message printed although the run had errors")
	}
}

func TestApplyNoopChangesNothing(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - file:
        - @DIR@/new:
            ensure: present
            content: "hello\n"
            owner: @USER@
            group: @GROUP@
            mode: "0644"
        - @DIR@/dir:
            ensure: directory
            owner: @USER@
            group: @GROUP@
            mode: "0755"
    - exec:
        - touch @DIR@/touched:
            subscribe: [file#@DIR@/new]
        - guarded:
            command: touch @DIR@/guarded
            onlyif: /bin/true
`)
	out, res := applyJSON(t, dir, "m.yaml", "--noop")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	for _, f := range []string{"new", "dir", "touched", "guarded"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("noop created %s", f)
		}
	}
	for ref, msg := range map[string]string{
		"file#" + dir + "/new":           "Would have created the file",
		"file#" + dir + "/dir":           "Would have created directory",
		"exec#touch " + dir + "/touched": "Would have executed via subscribe",
		"exec#guarded":                   "Would have executed",
	} {
		e := out.event(t, ref)
		if !e.Changed || !e.Noop || e.NoopMessage != msg {
			t.Errorf("%s: changed=%v noop=%v message=%q, want %q", ref, e.Changed, e.Noop, e.NoopMessage, msg)
		}
	}
}

func TestApplySecondRunIsStable(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", `
data:
  who: world
ccm:
  resources:
    - file:
        - defaults: {owner: @USER@, group: @GROUP@, mode: "600"}
        - @DIR@/a: {ensure: present, content: "hello {{ Data.who }}\n"}
        - @DIR@/d: {ensure: directory}
        - @DIR@/d/b: {ensure: present, content: "", require: [file#@DIR@/d]}
    - exec:
        - restart:
            command: touch @DIR@/restarted
            refreshonly: true
            subscribe: [file#@DIR@/a]
`)
	first, res := applyJSON(t, dir, "m.yaml")
	if res.Code != 0 || first.Summary.Changed != 4 {
		t.Fatalf("first run: exit %d, summary %+v\n%s", res.Code, first.Summary, res.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "hello world\n" {
		t.Fatalf("content = %q", b)
	}
	second, res := applyJSON(t, dir, "m.yaml")
	if res.Code != 0 || second.Summary.Stable != 4 || second.Summary.Changed != 0 {
		t.Fatalf("second run not stable: exit %d, summary %+v", res.Code, second.Summary)
	}
}

func TestApplyDataAnnotations(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", `
data:
  # @require
  listen:
  # @validate isInt(value) && int(value) > 1024
  port: 80
  # @frobnicate
  other: x
ccm:
  resources:
    - exec:
        - touch @DIR@/ran: {}
`)
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml")
	if res.Code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{"m.yaml:3: data.listen: @require failed", "m.yaml:5: data.port: @validate failed"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("a resource ran although the data was invalid")
	}
	res = ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--data", "listen=0.0.0.0", "--data", "port=8080")
	if res.Code != 0 {
		t.Fatalf("--data should satisfy the annotations: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "frobnicate") {
		t.Errorf("an unknown directive should be warned about:\n%s", res.Stdout)
	}
}

// TestApplyDataPrecedenceInChildren: at every level of an apply tree the
// child's own data < the apply resource's data < --hiera < --data.
func TestApplyDataPrecedenceInChildren(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", `
data: {parent_only: leaked}
ccm:
  resources:
    - apply:
        - child.yaml:
            data: {a: passed, b: passed, c: passed}
`)
	writeManifest(t, dir, "child.yaml", `
data: {a: own, b: own, c: own, d: own}
ccm:
  resources:
    - exec:
        - record:
            command: "touch @DIR@/{{ Data.a }}-{{ Data.b }}-{{ Data.c }}-{{ Data.d }}-{{ lookup('data.parent_only', 'hidden') }}"
`)
	writeManifest(t, dir, "hiera.yaml", "data: {b: hiera, c: hiera}\n")
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--hiera", "hiera.yaml", "--data", "c=cli")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "passed-hiera-cli-own-hidden")); err != nil {
		entries, _ := os.ReadDir(dir)
		t.Fatalf("wrong precedence; files: %v", entries)
	}
}
