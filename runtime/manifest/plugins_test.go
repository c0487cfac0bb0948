package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const pinA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestParsePlugins(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []PluginRef
	}{
		{
			name: "absent",
			src:  "ccm:\n  resources:\n    - exec: [{x: {}}]\n",
		},
		{
			name: "null",
			src:  "ccm:\n  plugins:\n  resources:\n    - exec: [{x: {}}]\n",
		},
		{
			name: "path strings and maps with pins, lines kept",
			src: `ccm:
  plugins:
    - plugins/motd.wasm
    - path: /opt/vendor/site.wasm
      sha256: ` + strings.ToUpper(pinA) + `
    - {path: ../x.wasm}
    - path: y.wasm
      sha256: "sha256:` + pinA + `"
  resources:
    - exec: [{x: {}}]
`,
			want: []PluginRef{
				{Path: "plugins/motd.wasm", Line: 3},
				{Path: "/opt/vendor/site.wasm", SHA256: pinA, Line: 4},
				{Path: "../x.wasm", Line: 6},
				{Path: "y.wasm", SHA256: pinA, Line: 7},
			},
		},
		{
			name: "a digest that YAML reads as a number",
			src:  "ccm:\n  plugins:\n    - path: a.wasm\n      sha256: " + strings.Repeat("1", 60) + "1e10\n  resources:\n    - exec: [{x: {}}]\n",
			want: []PluginRef{{Path: "a.wasm", SHA256: strings.Repeat("1", 60) + "1e10", Line: 3}},
		},
		{
			name: "with a jet resource file",
			src:  "ccm:\n  plugins: [a.wasm]\n  resources_jet_file: r.jet\n",
			want: []PluginRef{{Path: "a.wasm", Line: 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Parse([]byte(tc.src), "m.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(doc.Plugins, tc.want) {
				t.Errorf("Plugins = %#v, want %#v", doc.Plugins, tc.want)
			}
		})
	}
}

func TestParsePluginsErrors(t *testing.T) {
	tests := []struct {
		name     string
		plugins  string // YAML under "  plugins:" (indented by the case)
		want     string
		sentinel error
	}{
		{"not a list", " a.wasm", "m.yaml:2: ccm.plugins: invalid value: must be a list of plugin files", ErrInvalid},
		{"map not list", " {path: a.wasm}", "m.yaml:2: ccm.plugins: invalid value: must be a list", ErrInvalid},
		{"unknown key", "\n    - path: a.wasm\n      sha265: " + pinA, `m.yaml:4: ccm.plugins[0].sha265: unknown key; did you mean "sha256"?`, ErrUnknownKey},
		{"missing path", "\n    - sha256: " + pinA, "m.yaml:3: ccm.plugins[0].path: invalid value: name the plugin's .wasm file", ErrInvalid},
		{"empty path", "\n    - \"\"", "m.yaml:3: ccm.plugins[0].path: invalid value", ErrInvalid},
		{"path not a string", "\n    - path: [a]", "m.yaml:3: ccm.plugins[0].path: invalid value: must be a string, not a list", ErrInvalid},
		{"number entry", "\n    - 12", "m.yaml:3: ccm.plugins[0]: invalid value: must be a string, not the number 12", ErrInvalid},
		{"list entry", "\n    - [a.wasm]", "m.yaml:3: ccm.plugins[0]: invalid value: a plugin is a path or a map with path and sha256, not a list", ErrInvalid},
		{"list pin", "\n    - path: a.wasm\n      sha256: [a]", "m.yaml:4: ccm.plugins[0].sha256: invalid value: must be a string, not a list", ErrInvalid},
		{"short pin", "\n    - path: a.wasm\n      sha256: abc", "m.yaml:4: ccm.plugins[0].sha256: invalid value: a sha256 pin is 64 hex digits, as printed by sha256sum FILE", ErrInvalid},
		{"non-hex pin", "\n    - path: a.wasm\n      sha256: " + strings.Repeat("g", 64), "m.yaml:4: ccm.plugins[0].sha256: invalid value: a sha256 pin is 64 hex digits", ErrInvalid},
		{"second entry", "\n    - a.wasm\n    - path: b.wasm\n      extra: 1", "m.yaml:5: ccm.plugins[1].extra: unknown key", ErrUnknownKey},
		{"duplicate key", "\n    - path: a.wasm\n      path: b.wasm", `m.yaml:4: ccm.plugins[0]: duplicate: key "path" repeated; first at line 3`, ErrDuplicate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := "ccm:\n  plugins:" + tc.plugins + "\n  resources:\n    - exec: [{x: {}}]\n"
			_, err := Parse([]byte(src), "m.yaml")
			if err == nil {
				t.Fatalf("no error for\n%s", src)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant prefix:\n%s", err, tc.want)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tc.sentinel)
			}
		})
	}
}
