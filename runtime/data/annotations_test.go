package data

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/manifest"
)

func req(line int, path ...string) manifest.Annotation {
	return manifest.Annotation{Path: path, Line: line, Directive: manifest.DirectiveRequire}
}

func val(line int, expr string, path ...string) manifest.Annotation {
	return manifest.Annotation{Path: path, Line: line, Directive: manifest.DirectiveValidate, Arg: expr}
}

func TestCheckAnnotations(t *testing.T) {
	tests := []struct {
		name     string
		anns     []manifest.Annotation
		data     map[string]any
		wantErrs []string // substrings, one per violation, in order
		wantIs   []error
		wantWarn []string
	}{
		{name: "no annotations", data: map[string]any{"a": 1}},
		{name: "require set", anns: []manifest.Annotation{req(2, "a")}, data: map[string]any{"a": "x"}},
		{name: "require false passes", anns: []manifest.Annotation{req(2, "a")}, data: map[string]any{"a": false}},
		{name: "require zero passes", anns: []manifest.Annotation{req(2, "a")}, data: map[string]any{"a": 0}},
		{name: "require empty map passes", anns: []manifest.Annotation{req(2, "a")}, data: map[string]any{"a": map[string]any{}}},
		{name: "require empty string fails", anns: []manifest.Annotation{req(2, "a")}, data: map[string]any{"a": ""},
			wantErrs: []string{"m.yaml:2: data.a: @require failed"}, wantIs: []error{ErrRequired}},
		{name: "require null fails", anns: []manifest.Annotation{req(2, "a")}, data: map[string]any{"a": nil},
			wantErrs: []string{"m.yaml:2: data.a: @require failed"}},
		{name: "require missing key fails", anns: []manifest.Annotation{req(3, "db", "host")}, data: map[string]any{"db": map[string]any{}},
			wantErrs: []string{"m.yaml:3: data.db.host: @require failed"}},
		{name: "require under a scalar parent fails", anns: []manifest.Annotation{req(3, "db", "host")}, data: map[string]any{"db": "x"},
			wantErrs: []string{"data.db.host: @require failed"}},
		{name: "validate true", anns: []manifest.Annotation{val(2, "isIP(value)", "a")}, data: map[string]any{"a": "10.0.0.1"}},
		{name: "validate false", anns: []manifest.Annotation{val(2, "isIP(value)", "a")}, data: map[string]any{"a": "nope"},
			wantErrs: []string{"m.yaml:2: data.a: @validate failed: isIP(value) is false"}, wantIs: []error{ErrValidate}},
		{name: "snake case names", anns: []manifest.Annotation{val(2, "is_ipv4(value) && is_int('1') && is_shellsafe(value)", "a")}, data: map[string]any{"a": "10.0.0.1"}},
		{name: "combined with operators", anns: []manifest.Annotation{val(2, `isIP(value) || value == "localhost"`, "a")}, data: map[string]any{"a": "localhost"}},
		{name: "expr builtins available", anns: []manifest.Annotation{val(2, `len(value) < 5 && value startsWith "ab"`, "a")}, data: map[string]any{"a": "abc"}},
		{name: "isRegex", anns: []manifest.Annotation{val(2, `isRegex(value, "^[a-z]+$") && is_regex(value, "b")`, "a")}, data: map[string]any{"a": "abc"}},
		{name: "bad regex at run time", anns: []manifest.Annotation{val(2, `isRegex(value, "[")`, "a")}, data: map[string]any{"a": "x"},
			wantErrs: []string{`invalid regex "["`}},
		{name: "int stringified", anns: []manifest.Annotation{val(2, "isInt(value) && int(value) > 1024", "port")}, data: map[string]any{"port": 8080}},
		{name: "integral float stringified without exponent", anns: []manifest.Annotation{val(2, "isInt(value)", "n")}, data: map[string]any{"n": 1e6}},
		{name: "float stringified", anns: []manifest.Annotation{val(2, "isFloat(value) && !isInt(value)", "f")}, data: map[string]any{"f": 2.5}},
		{name: "bool stringified", anns: []manifest.Annotation{val(2, `value == "true"`, "b")}, data: map[string]any{"b": true}},
		{name: "duration", anns: []manifest.Annotation{val(2, "isDuration(value)", "d")}, data: map[string]any{"d": "1d12h"}},
		{name: "validate skipped for nil", anns: []manifest.Annotation{val(2, "isIP(value)", "a")}, data: map[string]any{}},
		{name: "validate skipped for a map", anns: []manifest.Annotation{val(2, "isIP(value)", "a")}, data: map[string]any{"a": map[string]any{"b": 1}}},
		{name: "validate skipped for a list", anns: []manifest.Annotation{val(2, "isIP(value)", "a")}, data: map[string]any{"a": []any{"x"}}},
		{name: "empty string is validated", anns: []manifest.Annotation{val(2, "isIP(value)", "a")}, data: map[string]any{"a": ""},
			wantErrs: []string{"@validate failed"}},
		{name: "require checked first and stops validate even when written after", anns: []manifest.Annotation{val(2, "isIP(value)", "a"), req(3, "a")}, data: map[string]any{"a": ""},
			wantErrs: []string{"m.yaml:3: data.a: @require failed"}},
		{name: "bad expression reported even for a missing value", anns: []manifest.Annotation{val(2, "isIP(", "a")}, data: map[string]any{},
			wantErrs: []string{`expression "isIP(" does not compile`}},
		{name: "unknown function does not compile", anns: []manifest.Annotation{val(2, "isEmail(value)", "a")}, data: map[string]any{"a": "x"},
			wantErrs: []string{"does not compile"}},
		{name: "non-bool expression does not compile", anns: []manifest.Annotation{val(2, "len(value)", "a")}, data: map[string]any{"a": "x"},
			wantErrs: []string{"does not compile"}},
		{name: "empty validate", anns: []manifest.Annotation{val(2, "", "a")}, data: map[string]any{"a": "x"},
			wantErrs: []string{"no expression"}},
		{name: "unknown directive warns only", anns: []manifest.Annotation{{Path: []string{"a"}, Line: 4, Directive: "deprecated"}}, data: map[string]any{},
			wantWarn: []string{"m.yaml:4: data.a: unknown directive @deprecated ignored"}},
		{name: "all violations reported in document order",
			anns:     []manifest.Annotation{req(2, "a"), val(4, "isIP(value)", "b"), req(6, "c", "d"), val(7, "isInt(value)", "e")},
			data:     map[string]any{"a": "", "b": "x", "c": map[string]any{}, "e": "1"},
			wantErrs: []string{"m.yaml:2: data.a:", "m.yaml:4: data.b:", "m.yaml:6: data.c.d:"},
			wantIs:   []error{ErrRequired, ErrValidate, ErrRequired}},
		{name: "dotted key kept apart from nested path", anns: []manifest.Annotation{req(2, "a.b"), req(3, "a", "b")},
			data:     map[string]any{"a.b": "x", "a": map[string]any{}},
			wantErrs: []string{"m.yaml:3: data.a.b:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warns, err := CheckAnnotations("m.yaml", tt.anns, tt.data)
			if !slices.Equal(warnPrefixes(warns, tt.wantWarn), tt.wantWarn) {
				t.Fatalf("warnings %q, want prefixes %q", warns, tt.wantWarn)
			}
			if len(tt.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErrs)
			}
			var joined interface{ Unwrap() []error }
			if !errors.As(err, &joined) || len(joined.Unwrap()) != len(tt.wantErrs) {
				t.Fatalf("want %d joined violations, got %v", len(tt.wantErrs), err)
			}
			for i, e := range joined.Unwrap() {
				var me *manifest.Error
				if !errors.As(e, &me) {
					t.Fatalf("violation %d is %T, not *manifest.Error", i, e)
				}
				if !strings.Contains(e.Error(), tt.wantErrs[i]) {
					t.Fatalf("violation %d = %q, want it to contain %q", i, e, tt.wantErrs[i])
				}
				if i < len(tt.wantIs) && !errors.Is(e, tt.wantIs[i]) {
					t.Fatalf("violation %d = %v, want it to wrap %v", i, e, tt.wantIs[i])
				}
			}
		})
	}
}

// warnPrefixes returns warns cut to the length of the matching want, so
// that a test names only the part of the message it cares about.
func warnPrefixes(warns, want []string) []string {
	if len(warns) != len(want) {
		return warns
	}
	out := make([]string, len(warns))
	for i, w := range warns {
		out[i] = w
		if strings.HasPrefix(w, want[i]) {
			out[i] = want[i]
		}
	}
	return out
}

// TestAnnotationsOnResolvedData runs the whole path the engine takes: a
// manifest file on disk, Parse, Resolve with facts, CheckAnnotations on the
// final data. An override or --data satisfying @require must pass.
func TestAnnotationsOnResolvedData(t *testing.T) {
	const src = `hierarchy:
  order:
    - "env:${ lookup('facts.env') }"
data:
  # @require
  db_host: ""
  net:
    # @validate isIP(value) || value == "localhost"
    listen: 127.0.0.1
  # @required
  # @validate isInt(value)
  port: ~
overrides:
  env:prod:
    # @require
    db_host: db.example.com
    # comments here are ignored: @validate false
    port: 5432
ccm:
  resources:
    - exec:
        - /bin/true: {}
`
	path := filepath.Join(t.TempDir(), "site.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := manifest.Parse(raw, path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		facts    map[string]any
		cli      map[string]any
		wantErrs []string
	}{
		{name: "override satisfies require", facts: map[string]any{"env": "prod"}},
		{name: "no override: both requires fail", facts: map[string]any{},
			wantErrs: []string{path + ":5: data.db_host: @require failed", path + ":10: data.port: @require failed"}},
		{name: "cli data satisfies require", facts: map[string]any{}, cli: map[string]any{"db_host": "h", "port": 1}},
		{name: "cli data breaks validate", facts: map[string]any{"env": "prod"}, cli: map[string]any{"net": map[string]any{"listen": "any"}, "port": "x"},
			wantErrs: []string{path + ":8: data.net.listen: @validate failed", path + ":11: data.port: @validate failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			final, err := Resolve(doc.Data, doc.Hierarchy, doc.Overrides, tt.facts, tt.cli)
			if err != nil {
				t.Fatal(err)
			}
			warns, err := CheckAnnotations(doc.File, doc.Annotations, final)
			if len(warns) != 0 {
				t.Fatalf("unexpected warnings %q", warns)
			}
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tt.wantErrs) {
				t.Fatalf("got %q, want %d violations starting %q", got, len(tt.wantErrs), tt.wantErrs)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.wantErrs[i]) {
					t.Fatalf("violation %d = %q, want prefix %q", i, got[i], tt.wantErrs[i])
				}
			}
		})
	}
}

func TestCheckAnnotationsDoesNotEchoValues(t *testing.T) {
	const secret = "hunter2-secret"
	_, err := CheckAnnotations("m.yaml", []manifest.Annotation{val(2, "len(value) > 20", "password")}, map[string]any{"password": secret})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("want a violation that does not show the value, got %v", err)
	}
}

// BenchmarkCheckAnnotations measures a typical check: 50 keys, each with
// @require and a @validate sharing one of five expressions.
func BenchmarkCheckAnnotations(b *testing.B) {
	exprs := []string{"isIP(value)", "isHostname(value)", "isInt(value) && int(value) > 0", "isDuration(value)", `isRegex(value, "^[a-z]+$")`}
	values := []any{"10.0.0.1", "web01", 8080, "30s", "abc"}
	data := map[string]any{}
	var anns []manifest.Annotation
	for i := range 50 {
		k := "k" + strconv.Itoa(i)
		data[k] = values[i%5]
		anns = append(anns, req(i*3+1, k), val(i*3+2, exprs[i%5], k))
	}
	for b.Loop() {
		if _, err := CheckAnnotations("m.yaml", anns, data); err != nil {
			b.Fatal(err)
		}
	}
}
