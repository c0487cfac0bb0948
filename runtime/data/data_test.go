package data

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestMerge(t *testing.T) {
	tests := []struct {
		name     string
		dst, src map[string]any
		want     map[string]any
	}{
		{name: "both nil", want: map[string]any{}},
		{name: "src over nil", src: map[string]any{"a": 1}, want: map[string]any{"a": 1}},
		{name: "scalars replaced", dst: map[string]any{"a": 1, "b": 2}, src: map[string]any{"a": "x"}, want: map[string]any{"a": "x", "b": 2}},
		{name: "maps merged recursively", dst: map[string]any{"m": map[string]any{"a": 1, "n": map[string]any{"x": 1}}}, src: map[string]any{"m": map[string]any{"b": 2, "n": map[string]any{"y": 2}}},
			want: map[string]any{"m": map[string]any{"a": 1, "b": 2, "n": map[string]any{"x": 1, "y": 2}}}},
		{name: "lists replaced", dst: map[string]any{"l": []any{1, 2}}, src: map[string]any{"l": []any{3}}, want: map[string]any{"l": []any{3}}},
		{name: "map replaces scalar", dst: map[string]any{"a": 1}, src: map[string]any{"a": map[string]any{"b": 1}}, want: map[string]any{"a": map[string]any{"b": 1}}},
		{name: "scalar replaces map", dst: map[string]any{"a": map[string]any{"b": 1}}, src: map[string]any{"a": nil}, want: map[string]any{"a": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Merge(tt.dst, tt.src); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Merge = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestMergeSharesNothing(t *testing.T) {
	dst := map[string]any{"m": map[string]any{"a": 1}, "l": []any{1}}
	src := map[string]any{"m": map[string]any{"b": 2}, "s": map[string]any{"c": 3}}
	got := Merge(dst, src)
	got["m"].(map[string]any)["a"] = "changed"
	got["l"].([]any)[0] = "changed"
	got["s"].(map[string]any)["c"] = "changed"
	if dst["m"].(map[string]any)["a"] != 1 || dst["l"].([]any)[0] != 1 || src["s"].(map[string]any)["c"] != 3 {
		t.Fatalf("inputs changed through the result: dst=%v src=%v", dst, src)
	}
}

func TestParseAssignments(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	yamlFile := write("d.yaml", "a: {b: 1, c: [x]}\nport: 80\n")
	jsonFile := write("d.json", `{"a": {"d": true}}`)
	emptyFile := write("empty.yaml", "")
	listFile := write("list.yaml", "- a\n")
	badFile := write("bad.yaml", "a: [\n")

	tests := []struct {
		name    string
		in      []string
		want    map[string]any
		wantErr string
	}{
		{name: "none", in: nil, want: map[string]any{}},
		{name: "simple", in: []string{"k=v"}, want: map[string]any{"k": "v"}},
		{name: "values stay strings", in: []string{"port=8080", "on=true"}, want: map[string]any{"port": "8080", "on": "true"}},
		{name: "dotted nests", in: []string{"a.b=1", "a.c=2"}, want: map[string]any{"a": map[string]any{"b": "1", "c": "2"}}},
		{name: "value keeps equals", in: []string{"k=a=b"}, want: map[string]any{"k": "a=b"}},
		{name: "empty value", in: []string{"k="}, want: map[string]any{"k": ""}},
		{name: "later wins", in: []string{"k=1", "k=2"}, want: map[string]any{"k": "2"}},
		{name: "dotted over scalar", in: []string{"a=1", "a.b=2"}, want: map[string]any{"a": map[string]any{"b": "2"}}},
		{name: "yaml file", in: []string{yamlFile}, want: map[string]any{"a": map[string]any{"b": 1, "c": []any{"x"}}, "port": 80}},
		{name: "file then key", in: []string{yamlFile, "a.b=2"}, want: map[string]any{"a": map[string]any{"b": "2", "c": []any{"x"}}, "port": 80}},
		{name: "key then file deep-merged", in: []string{"a.z=1", yamlFile, jsonFile}, want: map[string]any{"a": map[string]any{"z": "1", "b": 1, "c": []any{"x"}, "d": true}, "port": 80}},
		{name: "empty file", in: []string{emptyFile}, want: map[string]any{}},
		{name: "missing file", in: []string{filepath.Join(dir, "nope.yaml")}, wantErr: "give an existing YAML/JSON file or use key=value"},
		{name: "file not a map", in: []string{listFile}, wantErr: "must be a map"},
		{name: "bad yaml", in: []string{badFile}, wantErr: "bad.yaml:"},
		{name: "empty key", in: []string{"=v"}, wantErr: "empty part"},
		{name: "empty dotted part", in: []string{"a..b=v"}, wantErr: `key "a..b" has an empty part`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAssignments(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAssignments: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v want %#v", got, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	facts := map[string]any{
		"env":      "prod",
		"hostname": "web01",
		"host":     map[string]any{"info": map[string]any{"platformFamily": "debian"}},
		"cores":    4,
	}
	specExample := map[string]any{
		"log_level": "INFO", "packages": []any{"ca-certificates"},
	}
	specOverrides := map[string]any{
		"env:prod":   map[string]any{"log_level": "WARN", "packages": []any{"prodpkg"}},
		"host:web01": map[string]any{"log_level": "TRACE"},
	}
	specOrder := []any{"env:${ lookup('facts.env') }", "host:${ lookup('facts.hostname') }"}

	tests := []struct {
		name      string
		doc       map[string]any
		hierarchy map[string]any
		overrides map[string]any
		layers    []map[string]any
		want      map[string]any
		wantErr   string
	}{
		{name: "nothing", want: map[string]any{}},
		{name: "data only", doc: map[string]any{"a": 1}, want: map[string]any{"a": 1}},
		{name: "no hierarchy uses default", doc: map[string]any{"a": 1, "b": 2},
			overrides: map[string]any{"default": map[string]any{"a": 9}, "other": map[string]any{"b": 9}},
			want:      map[string]any{"a": 9, "b": 2}},
		{name: "data expanded with facts keeping types", doc: map[string]any{"cores": "${ lookup('facts.cores') }", "fam": "os-{{ Facts.host.info.platformFamily }}", "missing": "${ lookup('facts.nope', '') }"},
			want: map[string]any{"cores": 4, "fam": "os-debian", "missing": ""}},
		{name: "entry with missing fact in a Facts access is skipped", doc: map[string]any{"a": 1},
			hierarchy: map[string]any{"order": []any{"role:{{ Facts.role }}", "default"}},
			overrides: map[string]any{"role:": map[string]any{"a": "wrong"}, "default": map[string]any{"a": 2}},
			want:      map[string]any{"a": 2}},
		{name: "spec example deep", doc: specExample, hierarchy: map[string]any{"order": specOrder, "merge": "deep"}, overrides: specOverrides,
			want: map[string]any{"log_level": "TRACE", "packages": []any{"ca-certificates", "prodpkg"}}},
		{name: "spec example first", doc: specExample, hierarchy: map[string]any{"order": specOrder}, overrides: specOverrides,
			want: map[string]any{"log_level": "WARN", "packages": []any{"prodpkg"}}},
		{name: "first replaces nested maps wholesale", doc: map[string]any{"m": map[string]any{"a": 1, "b": 2}},
			hierarchy: map[string]any{"order": []any{"x"}, "merge": "first"}, overrides: map[string]any{"x": map[string]any{"m": map[string]any{"a": 3}}},
			want: map[string]any{"m": map[string]any{"a": 3}}},
		{name: "deep merges nested maps", doc: map[string]any{"m": map[string]any{"a": 1, "b": 2}},
			hierarchy: map[string]any{"order": []any{"x"}, "merge": "deep"}, overrides: map[string]any{"x": map[string]any{"m": map[string]any{"a": 3}}},
			want: map[string]any{"m": map[string]any{"a": 3, "b": 2}}},
		{name: "entry with missing fact is skipped", doc: map[string]any{"a": 1},
			hierarchy: map[string]any{"order": []any{"role:${ lookup('facts.role') }", "default"}},
			overrides: map[string]any{"role:": map[string]any{"a": "wrong"}, "default": map[string]any{"a": 2}},
			want:      map[string]any{"a": 2}},
		{name: "first stops at the first match", doc: map[string]any{},
			hierarchy: map[string]any{"order": []any{"nomatch", "os:{{ Facts.host.info.platformFamily }}", "default"}},
			overrides: map[string]any{"os:debian": map[string]any{"a": "debian"}, "default": map[string]any{"a": "default", "b": 1}},
			want:      map[string]any{"a": "debian"}},
		{name: "null override matches and stops", doc: map[string]any{"a": 1},
			hierarchy: map[string]any{"order": []any{"x", "default"}},
			overrides: map[string]any{"x": nil, "default": map[string]any{"a": 2}},
			want:      map[string]any{"a": 1}},
		{name: "override values expanded", doc: map[string]any{},
			overrides: map[string]any{"default": map[string]any{"h": "${ Facts.hostname }"}},
			want:      map[string]any{"h": "web01"}},
		{name: "layers merged last in order", doc: map[string]any{"a": 1, "m": map[string]any{"x": 1}},
			layers: []map[string]any{{"a": 2, "m": map[string]any{"y": 2}}, nil, {"a": "cli"}},
			want:   map[string]any{"a": "cli", "m": map[string]any{"x": 1, "y": 2}}},
		{name: "layers are not expanded", doc: map[string]any{}, layers: []map[string]any{{"a": "{{ raw }}"}},
			want: map[string]any{"a": "{{ raw }}"}},
		{name: "order as []string", doc: map[string]any{}, hierarchy: map[string]any{"order": []string{"default"}},
			overrides: map[string]any{"default": map[string]any{"a": 1}}, want: map[string]any{"a": 1}},
		{name: "hierarchy without order", hierarchy: map[string]any{"merge": "deep"}, wantErr: "hierarchy.order: a hierarchy needs an order list"},
		{name: "bad merge", hierarchy: map[string]any{"order": []any{}, "merge": "last"}, wantErr: "hierarchy.merge: last is not a merge mode"},
		{name: "unknown hierarchy key", hierarchy: map[string]any{"order": []any{}, "x": 1}, wantErr: "hierarchy.x: unknown key"},
		{name: "order entry not string", hierarchy: map[string]any{"order": []any{1}}, wantErr: "hierarchy.order[0]: must be a string"},
		{name: "data cannot see Data", doc: map[string]any{"a": "{{ Data.x }}"}, wantErr: "data: a: expression \"Data.x\": unknown name Data"},
		{name: "data value with a missing fact", doc: map[string]any{"a": "{{ Facts.nope }}"}, wantErr: `data: a: expression "Facts.nope": Facts has no key "nope"`},
		{name: "data value with a missing lookup", doc: map[string]any{"a": "{{ lookup('facts.nope') }}"}, wantErr: `data: a: expression "lookup('facts.nope')": lookup "facts.nope": not found`},
		{name: "override value with a missing fact", hierarchy: map[string]any{"order": []any{"default"}}, overrides: map[string]any{"default": map[string]any{"a": "{{ Facts.nope }}"}}, wantErr: `overrides.default: a: expression "Facts.nope": Facts has no key "nope"`},
		{name: "bad order template", hierarchy: map[string]any{"order": []any{"{{ foo( }}"}}, wantErr: "hierarchy.order[0]: expression"},
		{name: "override not a map", overrides: map[string]any{"default": "x"}, wantErr: "overrides.default: an override must be a map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.doc, tt.hierarchy, tt.overrides, facts, tt.layers...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestResolveDoesNotMutate(t *testing.T) {
	doc := map[string]any{"l": []any{"a"}, "m": map[string]any{"x": 1}}
	over := map[string]any{"default": map[string]any{"l": []any{"b"}, "m": map[string]any{"y": 2}}}
	layer := map[string]any{"m": map[string]any{"z": 3}}
	got, err := Resolve(doc, map[string]any{"order": []any{"default"}, "merge": "deep"}, over, nil, layer)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"l": []any{"a", "b"}, "m": map[string]any{"x": 1, "y": 2, "z": 3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v want %#v", got, want)
	}
	if !reflect.DeepEqual(doc, map[string]any{"l": []any{"a"}, "m": map[string]any{"x": 1}}) ||
		!reflect.DeepEqual(layer, map[string]any{"m": map[string]any{"z": 3}}) ||
		len(over["default"].(map[string]any)["l"].([]any)) != 1 {
		t.Fatalf("inputs mutated: doc=%v over=%v layer=%v", doc, over, layer)
	}
}
