package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseResourceList(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Resource
	}{
		{
			name: "both shapes, defaults and lines in the rendered output",
			src: `
- file:
    - defaults: {owner: app}
    - /etc/a: {mode: "0644"}
    - /etc/b: {}
- exec:
    name: hi
    command: /bin/echo hi
    require: [file#/etc/a]
`,
			want: []Resource{
				{Type: "file", Name: "/etc/a", Line: 4, Properties: map[string]any{"owner": "app", "mode": "0644"}},
				{Type: "file", Name: "/etc/b", Line: 5, Properties: map[string]any{"owner": "app"}},
				{Type: "exec", Name: "hi", Line: 6, Properties: map[string]any{"command": "/bin/echo hi"}, Require: []string{"file#/etc/a"}},
			},
		},
		{
			name: "templates stay raw",
			src:  "- exec:\n    - \"{{ Data.cmd }}\": {}\n",
			want: []Resource{{Type: "exec", Name: "{{ Data.cmd }}", Line: 2, Properties: map[string]any{}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseResources([]byte(tc.src), "web.jet")
			if err != nil {
				t.Fatalf("ParseResources: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestParseResourceListErrors(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		sentinel error
		want     string
	}{
		{name: "empty output", src: "", sentinel: ErrNoResources, want: "web.jet: "},
		{name: "only whitespace", src: "\n  \n", sentinel: ErrNoResources, want: "web.jet"},
		{name: "empty list", src: "[]\n", sentinel: ErrNoResources, want: "web.jet:1: resources"},
		{name: "a map, not a list", src: "ccm:\n  resources: []\n", sentinel: ErrInvalid, want: "web.jet:1: resources: "},
		{name: "unknown control key", src: "- exec:\n    - a:\n        command: x\n        control: {iff: x}\n", sentinel: ErrUnknownKey, want: "web.jet:4: exec#a: control.iff"},
		{name: "two types in one item", src: "- exec: []\n  file: []\n", sentinel: ErrInvalid, want: "web.jet:1: resources[0]: "},
		{name: "duplicate", src: "- exec:\n    - a: {}\n- exec:\n    - a: {}\n", sentinel: ErrDuplicate, want: "web.jet:4: exec#a"},
		{name: "yaml syntax", src: "- exec:\n  - a: [\n", sentinel: ErrSyntax, want: "web.jet:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseResources([]byte(tc.src), "web.jet")
			if err == nil {
				t.Fatalf("no error, want %v", tc.sentinel)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error %q is not %v", err, tc.sentinel)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}
