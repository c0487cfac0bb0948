package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// TestStatusCommand runs `ccm status` (and its alias info) through the
// binary: the YAML and JSON shapes, relative file names, and the exit
// statuses of docs/manifests.md for what it cannot show.
func TestStatusCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "motd"), []byte("hello\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	user, group := me(t)
	state, fakeEnv := ccmtest.FakeSystemctl(t, map[string]string{"web.service": "active enabled", "db": "inactive disabled"})
	tests := []struct {
		name   string
		args   []string
		env    []string
		code   int
		want   map[string]any // fields of the printed document
		stderr string
	}{
		{name: "file yaml", args: []string{"status", "file", dir + "/motd"}, want: map[string]any{
			"name": dir + "/motd", "ensure": "present", "provider": "posix", "owner": user, "group": group, "mode": "0640", "size": 6,
			"checksum": "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"}},
		{name: "file json", args: []string{"status", "file", dir + "/motd", "--json"}, want: map[string]any{"name": dir + "/motd", "size": 6}},
		{name: "info alias, relative name", args: []string{"info", "file", "motd"}, want: map[string]any{"name": dir + "/motd"}},
		{name: "absent file", args: []string{"status", "file", dir + "/nope"}, want: map[string]any{"name": dir + "/nope", "ensure": "absent"}},
		{name: "service running", args: []string{"status", "service", "web.service"}, env: fakeEnv,
			want: map[string]any{"name": "web.service", "provider": "systemd", "running": true, "enabled": true}},
		{name: "service stopped json", args: []string{"status", "service", "db", "--json"}, env: fakeEnv,
			want: map[string]any{"name": "db", "running": false, "enabled": false}},
		{name: "unknown unit", args: []string{"status", "service", "nope"}, env: fakeEnv, code: 1,
			stderr: "ccm: error: service#nope: unit nope not found by systemctl is-enabled"},
		{name: "bad unit name", args: []string{"status", "service", "--", "-x"}, env: fakeEnv, code: 1, stderr: "service#-x: invalid properties"},
		{name: "exec", args: []string{"status", "exec", "/bin/true"}, code: 2, stderr: "status is not supported for exec"},
		{name: "apply", args: []string{"status", "apply", "m.yaml"}, code: 2, stderr: "status is not supported for apply"},
		{name: "archive absent", args: []string{"status", "archive", "x.tgz"}, want: map[string]any{"name": dir + "/x.tgz", "ensure": "absent"}},
		{name: "unknown type", args: []string{"status", "nosuch", "x"}, code: 2, stderr: `resource type "nosuch": unknown resource type`},
		{name: "missing name", args: []string{"status", "file"}, code: 2, stderr: "accepts 2 arg(s), received 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := ccmtest.Run(t, dir, tt.env, tt.args...)
			if res.Code != tt.code || !strings.Contains(res.Stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q\nstdout %s", res.Code, res.Stderr, tt.code, tt.stderr, res.Stdout)
			}
			if tt.want == nil {
				if res.Stdout != "" {
					t.Errorf("stdout %q, want nothing", res.Stdout)
				}
				return
			}
			got := statusDoc(t, res.Stdout, slices.Contains(tt.args, "--json"))
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || !sameValue(g, v) {
					t.Errorf("%s = %#v, want %#v (document %v)", k, g, v, got)
				}
			}
		})
	}
	// Status only asks: the fake saw the two probes per service query, no change.
	if m := mutatingCalls(ccmtest.Calls(t, state)); len(m) != 0 {
		t.Errorf("status made mutating systemctl calls: %q", m)
	}
}

// TestStatusPackage asks apt about hello, installed or not: the document
// says which, with the provider. Skipped without dpkg.
func TestStatusPackage(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Skip("no dpkg-query here")
	}
	want := map[string]any{"name": "hello", "provider": "apt"}
	if out, err := exec.Command("dpkg-query", "-W", "-f=${Version} ${db:Status-Status}", "hello").Output(); err == nil && strings.HasSuffix(string(out), " installed") {
		want["version"] = strings.Fields(string(out))[0]
	} else {
		want["ensure"] = "absent"
	}
	res := ccmtest.Run(t, t.TempDir(), nil, "status", "package", "hello", "--json")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	got := statusDoc(t, res.Stdout, true)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v (document %v)", k, got[k], v, got)
		}
	}
}

func statusDoc(t *testing.T, out string, isJSON bool) map[string]any {
	t.Helper()
	var doc map[string]any
	var err error
	if isJSON {
		err = json.Unmarshal([]byte(out), &doc)
	} else {
		err = yaml.Unmarshal([]byte(out), &doc)
	}
	if err != nil {
		t.Fatalf("decoding the status output (json %v): %v\n%s", isJSON, err, out)
	}
	return doc
}

// sameValue compares a decoded value with a wanted one, numbers by value
// (YAML gives int, JSON float64).
func sameValue(got, want any) bool {
	if w, ok := want.(int); ok {
		switch g := got.(type) {
		case int:
			return g == w
		case float64:
			return g == float64(w)
		}
		return false
	}
	return got == want
}
