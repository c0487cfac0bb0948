package manifest

import (
	"errors"
	"strings"
	"testing"
)

// TestYAMLSyntaxErrors: each malformed shape is reported at the line and
// column of the mistake (not the line where yaml/v3 saw the enclosing
// construct start), with a hint and the source line under a caret.
func TestYAMLSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line, col int
		want      []string
	}{
		{"bad indentation", "ccm:\n  resources:\n    - file:\n        - /x:\n            ensure: present\n           mode: x\n", 6, 12, []string{"check the indentation", "6 |            mode: x\n  |            ^"}},
		{"tab", "ccm:\n\tresources: []\n", 2, 1, []string{"indent with spaces", "2 | →resources"}},
		{"unclosed double quote", "a: 1\nb: \"oops\nc: 3\n", 2, 4, []string{"never closed", "2 | b: \"oops\n  |    ^"}},
		{"unclosed single quote", "a: 1\nb: 'oops\nc: 3\n", 2, 4, []string{"never closed"}},
		{"unclosed flow list", "a: [1, 2\nb: 3\n", 2, 1, []string{"never closed"}},
		{"unclosed flow map", "a: {x: 1\nb: 3\n", 2, 1, []string{"never closed"}},
		{"key: value: x", "a: 1\nb: value: x\nc: 2\n", 2, 9, []string{`quote the value`, "2 | b: value: x\n  |         ^"}},
		{"continuation with a colon", "a: 1\n  b: 2\n", 2, 4, []string{"mapping value"}},
		{"list item in a map", "a: 1\n- b\n", 2, 1, []string{"check the indentation"}},
		{"unquoted template", "name: {{ Data.x }}/y\n", 1, 8, []string{"quote a template"}},
		{"tab after content", "a:\n  b: 1\n\tc: 2\n", 3, 1, []string{"indent with spaces"}},
		{"unclosed quote in a resource", "ccm:\n  resources:\n    - exec:\n        - \"echo hi:\n            cwd: /\n", 4, 11, []string{"never closed"}},
		{"list item under a scalar", "ccm:\n  resources: x\n    - file: {}\n", 3, 11, []string{"3 |     - file: {}\n  |           ^"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "m.yaml")
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *Error", err, err)
			}
			if e.Line != tc.line || e.Column != tc.col {
				t.Errorf("at %d:%d, want %d:%d\n%v", e.Line, e.Column, tc.line, tc.col, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain:\n%s", err, w)
				}
			}
		})
	}
}
