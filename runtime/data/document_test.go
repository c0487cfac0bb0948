package data

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// specHiera is docs/manifests.md's example; merge is filled in per case. The
// order entries are quoted: as the spec prints them ({ inside a flow
// list) they are not valid YAML.
const specHiera = `hierarchy:
  order: ["env:${ lookup('facts.env') }", "host:${ lookup('facts.hostname') }"]
  merge: %s
data: {log_level: INFO, packages: [ca-certificates]}
overrides:
  env:prod: {log_level: WARN, packages: [prodpkg]}
  host:web01: {log_level: TRACE}
`

func TestResolveDocument(t *testing.T) {
	prodWeb := map[string]any{"env": "prod", "hostname": "web01"}
	tests := []struct {
		name     string
		src      string
		facts    map[string]any
		layers   []map[string]any
		want     map[string]any
		wantErr  string // substring
		sentinel error
		warnings int
	}{
		{
			name:  "spec example, merge deep",
			src:   strings.Replace(specHiera, "%s", "deep", 1),
			facts: prodWeb,
			want:  map[string]any{"log_level": "TRACE", "packages": []any{"ca-certificates", "prodpkg"}},
		},
		{
			name:  "spec example, merge first",
			src:   strings.Replace(specHiera, "%s", "first", 1),
			facts: prodWeb,
			want:  map[string]any{"log_level": "WARN", "packages": []any{"prodpkg"}},
		},
		{
			name:  "missing facts skip every level",
			src:   strings.Replace(specHiera, "%s", "deep", 1),
			facts: map[string]any{},
			want:  map[string]any{"log_level": "INFO", "packages": []any{"ca-certificates"}},
		},
		{
			name:   "layers win",
			src:    strings.Replace(specHiera, "%s", "deep", 1),
			facts:  prodWeb,
			layers: []map[string]any{{"log_level": "DEBUG"}, nil},
			want:   map[string]any{"log_level": "DEBUG", "packages": []any{"ca-certificates", "prodpkg"}},
		},
		{
			name: "json document",
			src:  `{"data": {"port": 80}, "overrides": {"default": {"port": 8080}}}`,
			want: map[string]any{"port": 8080},
		},
		{
			name: "manifest keys are ignored",
			src:  "data: {a: x}\nccm: {resources: []}\n",
			want: map[string]any{"a": "x"},
		},
		{name: "empty document", src: "", want: map[string]any{}},
		{
			name:     "require fails naming file and line",
			src:      "data:\n  # @require\n  token: \"\"\n",
			wantErr:  "h.yaml:2: data.token: @require failed",
			sentinel: ErrRequired,
		},
		{
			name:   "a layer satisfies require",
			src:    "data:\n  # @require\n  token: \"\"\n",
			layers: []map[string]any{{"token": "t"}},
			want:   map[string]any{"token": "t"},
		},
		{
			name:     "validate fails",
			src:      "data:\n  # @validate isIP(value)\n  addr: nope\n",
			wantErr:  "h.yaml:2: data.addr: @validate failed",
			sentinel: ErrValidate,
		},
		{
			name:     "unknown directive warns",
			src:      "data:\n  # @frobnicate\n  a: 1\n",
			want:     map[string]any{"a": 1},
			warnings: 1,
		},
		{name: "not a map", src: "[1, 2]", wantErr: "must be a map"},
		{name: "data not a map", src: "data: [1]", wantErr: "h.yaml: data must be a map"},
		{name: "hierarchy without order", src: "hierarchy: {merge: deep}", wantErr: "hierarchy.order"},
		{name: "bad merge", src: "hierarchy: {order: [a], merge: sideways}", wantErr: "hierarchy.merge"},
		{name: "bad yaml", src: "data: {", wantErr: "h.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := ResolveDocument([]byte(tt.src), "h.yaml", tt.facts, tt.layers...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
					t.Fatalf("error %v does not wrap %v", err, tt.sentinel)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, want %#v", got, tt.want)
			}
			if len(warnings) != tt.warnings {
				t.Fatalf("warnings = %q, want %d", warnings, tt.warnings)
			}
		})
	}
}

// FuzzResolve feeds arbitrary documents and one fact to the Hiera
// resolver: it may reject them, never panic.
func FuzzResolve(f *testing.F) {
	f.Add(strings.Replace(specHiera, "%s", "deep", 1), "prod")
	f.Add(strings.Replace(specHiera, "%s", "first", 1), "")
	f.Add("data:\n  # @require\n  # @validate isIP(value)\n  a: ${ lookup('facts.env') }\n", "1.2.3.4")
	f.Add(`{"hierarchy": {"order": ["${ facts.env }"]}, "overrides": {"x": {"a": [1]}}}`, "x")
	f.Add("hierarchy: {order: [\"${ lookup('facts.env') + 1 }\"]}\n", "{")
	f.Fuzz(func(t *testing.T, src, env string) {
		facts := map[string]any{"env": env, "hostname": "web01"}
		out, _, err := ResolveDocument([]byte(src), "fuzz.yaml", facts, map[string]any{"k": env})
		if err == nil && out["k"] != env {
			t.Fatalf("layer lost: %#v", out)
		}
	})
}
