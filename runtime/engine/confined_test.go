package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfinedTemplates: in a scope narrowed by grants, the files templates
// read (readFile, template, jet and its includes) and the child manifests it
// applies are checked against the scope's fs_read grant, and Environ is
// empty, so a vendor's manifest cannot read through its templates what its
// plugins may not. The operator's own scope is unchanged.
func TestConfinedTemplates(t *testing.T) {
	parent := `
ccm:
  resources:
    - mark:
        - root-env: {value: "{{ lookup('environ.SECRET', 'hidden') }}"}
    - apply:
        - vendor/@CHILD@:
            grants: {fs_read: ["@DIR@/vendor/**"]}
`
	tests := []struct {
		name, child string
		wantErr     string // the apply's error; "" = it runs
		wantValue   string // mark#v's value when it runs
	}{
		{name: "readFile inside the grant", child: "ccm:\n  resources:\n    - mark:\n        - v: {value: \"{{ readFile('inside.txt') }}\"}\n", wantValue: "inside"},
		{name: "readFile outside the grant", child: "ccm:\n  resources:\n    - mark:\n        - v: {value: \"{{ readFile('../secret.txt') }}\"}\n", wantErr: "fs_read not granted for @DIR@/secret.txt"},
		{name: "readFile through a symlink inside the grant", child: "ccm:\n  resources:\n    - mark:\n        - v: {value: \"{{ readFile('link.txt') }}\"}\n", wantErr: "fs_read not granted for @DIR@/secret.txt"},
		{name: "template file outside the grant", child: "ccm:\n  resources:\n    - mark:\n        - v: {value: \"{{ template('../t.templ') }}\"}\n", wantErr: "fs_read not granted for @DIR@/t.templ"},
		{name: "jet include through a symlink out of the grant", child: "ccm:\n  resources:\n    - mark:\n        - v: {value: \"{{ jet('inc.jet') }}\"}\n", wantErr: "fs_read not granted for @DIR@/secret.txt"},
		{name: "deferred readFile outside the grant fails the resource", child: "ccm:\n  resources:\n    - mark:\n        - v: {later: \"{{ readFile('../secret.txt') }}\"}\n", wantErr: "-"},
		{name: "Environ is empty", child: "ccm:\n  resources:\n    - mark:\n        - v: {value: \"{{ lookup('environ.SECRET', 'hidden') }}\"}\n", wantValue: "hidden"},
		{name: "a grandchild manifest outside the grant", child: "ccm:\n  resources:\n    - apply:\n        - ../other.yaml: {}\n", wantErr: "fs_read not granted for @DIR@/other.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, map[string]string{
				"secret.txt":        "s3cret",
				"t.templ":           "s3cret",
				"other.yaml":        "ccm:\n  resources:\n    - mark:\n        - other: {}\n",
				"vendor/inside.txt": "inside",
				"vendor/inc.jet":    "[[ include \"link.txt\" ]]",
				"vendor/child.yaml": tc.child,
			})
			symlink(t, filepath.Join(dir, "secret.txt"), filepath.Join(dir, "vendor", "link.txt"))
			writeFile(t, filepath.Join(dir, "m.yaml"), strings.NewReplacer("@DIR@", dir, "@CHILD@", "child.yaml").Replace(parent))
			f := &fakePlugins{}
			res, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) {
				o.Environ = map[string]string{"SECRET": "s3cret"}
			})
			if err != nil {
				t.Fatal(err)
			}
			if c, _ := f.call("root-env"); c.req.Properties["value"] != "s3cret" {
				t.Fatalf("the operator's scope lost Environ: %v", c.req.Properties["value"])
			}
			want := strings.ReplaceAll(tc.wantErr, "@DIR@", dir)
			switch {
			case tc.wantErr == "-":
				if e := event(t, res, "mark#v"); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "fs_read not granted for "+filepath.Join(dir, "secret.txt")) {
					t.Fatalf("mark#v = %+v", e)
				}
			case want != "":
				ref := "apply#vendor/child.yaml"
				if strings.Contains(tc.child, "other.yaml") {
					ref = "apply#../other.yaml"
				}
				e := event(t, res, ref)
				if !e.Failed || !strings.Contains(strings.Join(e.Error, " "), want) {
					t.Fatalf("apply event = %+v, want an error containing %q", e, want)
				}
				for _, c := range f.calls {
					if s, _ := c.req.Properties["value"].(string); strings.Contains(s, "s3cret") && c.req.Name != "root-env" {
						t.Fatalf("%s got the secret", c.req.Name)
					}
				}
			default:
				c, ok := f.call("v")
				if !ok || c.req.Properties["value"] != tc.wantValue {
					t.Fatalf("mark#v ran %v with %v, want value %q (events %v)", ok, c.req.Properties, tc.wantValue, refs(res))
				}
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
