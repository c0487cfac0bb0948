package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeModule is a fake plugin file for fakePlugins.Register: the
// description of a type that behaves like mark. version tells copies apart.
func fakeModule(typ, version string) string {
	return fmt.Sprintf(`{"abi":1,"type":%q,"version":%q,"providers":["fake"],"ensure":["present"],"default_ensure":"present"}`, typ, version)
}

func sumOf(s string) string {
	b := sha256.Sum256([]byte(s))
	return hex.EncodeToString(b[:])
}

func TestDeclaredPluginVisibility(t *testing.T) {
	vend := fakeModule("vend", "1")
	dir := tree(t, map[string]string{
		"m.yaml": "ccm:\n  resources:\n    - apply:\n        - vendor/m.yaml: {}\n    - apply:\n        - sibling.yaml: {}\n    - apply:\n        - other/m.yaml: {}\n",
		// the vendor declares vend and uses it, and so does its child
		"vendor/vend.json": vend,
		"vendor/m.yaml": "ccm:\n  plugins:\n    - path: vend.json\n      sha256: " + sumOf(vend) + "\n  resources:\n" +
			"    - vend:\n        - inchild: {}\n    - apply:\n        - sub/m.yaml: {}\n",
		"vendor/sub/m.yaml": "ccm:\n  resources:\n    - vend:\n        - ingrandchild: {}\n",
		// a sibling does not see it
		"sibling.yaml": "ccm:\n  resources:\n    - vend:\n        - insibling: {}\n",
		// another sibling declares its own vend: no conflict
		"other/vend.json": fakeModule("vend", "2"),
	})
	// (with an absolute path)
	other := "ccm:\n  plugins: [" + filepath.Join(dir, "other", "vend.json") + "]\n  resources:\n    - vend:\n        - inother: {}\n"
	if err := os.WriteFile(filepath.Join(dir, "other", "m.yaml"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}

	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"inchild", "ingrandchild", "inother"}) {
		t.Fatalf("applied = %v (events %v)", got, refs(res))
	}
	e := event(t, res, "apply#sibling.yaml")
	if !e.Failed || !strings.Contains(strings.Join(e.Error, "\n"), `sibling.yaml:4: vend#insibling: unknown resource type "vend"`) {
		t.Fatalf("sibling: %v", e.Error)
	}
	for name, version := range map[string]string{"inchild": "1", "ingrandchild": "1", "inother": "2"} {
		c, _ := f.call(name)
		want := "vend@" + sumOf(fakeModule("vend", version))[:12]
		if c.req.Type != "vend" || c.caller.Plugin != want {
			t.Errorf("%s: type %q plugin %q, want vend and %s", name, c.req.Type, c.caller.Plugin, want)
		}
	}
	if c, _ := f.call("inchild"); c.caller.Plugin == "" {
		t.Error("no plugin id on the caller")
	}
}

func TestDeclaredPluginNotVisibleInParent(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml":      "ccm:\n  resources:\n    - apply:\n        - c/m.yaml: {}\n    - vend:\n        - inparent: {}\n",
		"c/vend.json": fakeModule("vend", "1"),
		"c/m.yaml":    "ccm:\n  plugins: [vend.json]\n  resources:\n    - vend:\n        - inchild: {}\n",
	})
	f := &fakePlugins{}
	_, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), `m.yaml:6: vend#inparent: unknown resource type "vend"`) {
		t.Fatalf("err = %v", err)
	}
	if len(f.names()) != 0 {
		t.Fatalf("applied %v after a load error", f.names())
	}
}

// TestDeclaredPluginRefused: every refusal fails the child's load, so none
// of its resources runs, and the parent carries on.
func TestDeclaredPluginRefused(t *testing.T) {
	vend := fakeModule("vend", "1")
	tests := []struct {
		name   string
		parent string // ccm.plugins of the parent ("" = none)
		child  string // ccm.plugins of the child
		want   string
	}{
		{name: "pin mismatch", child: "\n    - path: vend.json\n      sha256: " + strings.Repeat("a", 64),
			want: "c/m.yaml:3: ccm.plugins[0]: plugin {DIR}/c/vend.json: sha256 mismatch: pinned " + strings.Repeat("a", 64) + ", the file has " + sumOf(vend)},
		{name: "built-in type", child: " [mark.json]",
			want: `c/m.yaml:2: ccm.plugins[0]: plugin {DIR}/c/mark.json: provides type "mark", which is built in`},
		{name: "engine type", child: " [apply.json]",
			want: `c/m.yaml:2: ccm.plugins[0]: plugin {DIR}/c/apply.json provides type "apply", which is built into the engine`},
		{name: "declared by the parent", parent: " [c/vend.json]", child: " [vend2.json]",
			want: `c/m.yaml:2: ccm.plugins[0]: plugin {DIR}/c/vend2.json provides type "vend", which is already visible here from m.yaml:2 ({DIR}/c/vend.json)`},
		{name: "the same plugin as the parent", parent: " [c/vend.json]", child: " [vend.json]",
			want: `which is already visible here from m.yaml:2`},
		{name: "twice in one manifest", child: "\n    - vend.json\n    - vend2.json",
			want: `c/m.yaml:4: ccm.plugins[1]: plugin {DIR}/c/vend2.json provides type "vend", which line 3 declares already ({DIR}/c/vend.json)`},
		{name: "missing file", child: " [nope.json]",
			want: "c/m.yaml:2: ccm.plugins[0]: plugin open {DIR}/c/nope.json: no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := "ccm:\n"
			if tt.parent != "" {
				parent += "  plugins:" + tt.parent + "\n"
			}
			parent += "  resources:\n    - apply:\n        - c/m.yaml: {}\n    - mark:\n        - after: {}\n"
			dir := tree(t, map[string]string{
				"m.yaml":       parent,
				"c/m.yaml":     "ccm:\n  plugins:" + tt.child + "\n  resources:\n    - mark:\n        - inchild: {}\n",
				"c/vend.json":  vend,
				"c/vend2.json": fakeModule("vend", "2"),
				"c/mark.json":  fakeModule("mark", "9"),
				"c/apply.json": fakeModule("apply", "9"),
			})
			f := &fakePlugins{}
			res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.names(); !slices.Equal(got, []string{"after"}) {
				t.Fatalf("applied = %v", got)
			}
			e := event(t, res, "apply#c/m.yaml")
			msg := strings.Join(e.Error, "\n")
			if want := strings.ReplaceAll(tt.want, "{DIR}", dir); !e.Failed || !strings.Contains(msg, want) {
				t.Fatalf("error:\n%s\nwant:\n%s", msg, want)
			}
		})
	}
}

func TestDeclaredPluginAtRootRefused(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml":    "ccm:\n  plugins: [mark.json]\n  resources:\n    - mark:\n        - x: {}\n",
		"mark.json": fakeModule("mark", "9"),
	})
	f := &fakePlugins{}
	_, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), `m.yaml:2: ccm.plugins[0]: plugin `+dir+`/mark.json: provides type "mark", which is built in`) {
		t.Fatalf("err = %v", err)
	}
	if len(f.names()) != 0 {
		t.Fatalf("applied %v after a load error", f.names())
	}
}

// TestDeclaredPluginReadThroughGrant: a confined manifest's ccm.plugins are
// registered with its own grants (and limits), so a plugin file outside
// fs_read is refused; a relative glob in the apply's grants, taken from the
// parent's directory, grants the vendor its plugin file.
func TestDeclaredPluginReadThroughGrant(t *testing.T) {
	vend := fakeModule("vend", "1")
	dir := tree(t, map[string]string{
		"m.yaml": "ccm:\n  resources:\n    - apply:\n        - vendor/m.yaml:\n            grants: {fs_read: [\"vendor/plugins/*.json\"]}\n            limits: {call_timeout: 3s}\n" +
			"    - apply:\n        - other/m.yaml:\n            grants: {fs_read: [\"other/data/**\"]}\n",
		"vendor/plugins/vend.json": vend,
		"vendor/m.yaml":            "ccm:\n  plugins: [plugins/vend.json]\n  resources:\n    - vend:\n        - granted: {}\n",
		"other/vend.json":          vend,
		"other/m.yaml":             "ccm:\n  plugins: [vend.json]\n  resources:\n    - vend:\n        - refused: {}\n",
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"granted"}) {
		t.Fatalf("applied = %v (events %v)", got, refs(res))
	}
	c, _ := f.call("granted")
	if want := filepath.Join(dir, "vendor/plugins/*.json"); len(c.caller.Grants) != 1 || !slices.Equal(c.caller.Grants[0].FSRead, []string{want}) {
		t.Errorf("granted's grants %+v, want fs_read %s", c.caller.Grants, want)
	}
	e := event(t, res, "apply#other/m.yaml")
	want := "plugin " + filepath.Join(dir, "other", "vend.json") + ": denied: fs_read not granted"
	if !e.Failed || !strings.Contains(strings.Join(e.Error, "\n"), want) {
		t.Fatalf("other: %v\nwant %s", e.Error, want)
	}
}
