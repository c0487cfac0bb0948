package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func ann(line int, directive, arg string, path ...string) Annotation {
	return Annotation{Path: path, Line: line, Directive: directive, Arg: arg}
}

func TestParseAnnotations(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Annotation
	}{
		{name: "no data", src: "ccm: {resources: []}\n"},
		{name: "empty document", src: ""},
		{name: "JSON has no comments", src: `{"data": {"a": "@require"}}`},
		{name: "require above top key", src: "data:\n  # @require\n  a: 1\n",
			want: []Annotation{ann(2, "require", "", "a")}},
		{name: "required is an alias", src: "data:\n  # @required\n  a: 1\n",
			want: []Annotation{ann(2, "require", "", "a")}},
		{name: "validate keeps its expression", src: "data:\n  #   @validate   isIP(value) || value == \"localhost\"  \n  a: x\n",
			want: []Annotation{ann(2, "validate", `isIP(value) || value == "localhost"`, "a")}},
		{name: "several directives in one block with prose and blank lines", src: "data:\n  # The database host.\n  # @require\n\n  #\n  # @validate isHostname(value)\n  host: x\n",
			want: []Annotation{ann(3, "require", "", "host"), ann(6, "validate", "isHostname(value)", "host")}},
		{name: "nested keys", src: "data:\n  db:\n    # @require\n    host: x\n    opts:\n      # @validate isInt(value)\n      port: 5432\n",
			want: []Annotation{ann(3, "require", "", "db", "host"), ann(6, "validate", "isInt(value)", "db", "opts", "port")}},
		{name: "sibling after nested map", src: "data:\n  a:\n    b: 1\n  # @require\n  c: 2\n",
			want: []Annotation{ann(4, "require", "", "c")}},
		{name: "unknown word kept for a warning", src: "data:\n  # @deprecated use b\n  a: 1\n",
			want: []Annotation{ann(2, "deprecated", "use b", "a")}},
		{name: "prose with @ is not a directive", src: "data:\n  # ask admin@example.com or @ me, @1, @require(x)\n  a: 1\n"},
		{name: "comment on the key's line is ignored", src: "data:\n  a: 1 # @require\n"},
		{name: "comment separated from the key by a blank line and a value is ignored", src: "data:\n  a: 1\n  # @require\n\n  b: 2\n"},
		{name: "comment above data itself is ignored", src: "# @require\ndata:\n  a: 1\n"},
		{name: "overrides comments ignored", src: "data:\n  a: 1\noverrides:\n  prod:\n    # @require\n    a: 2\n"},
		{name: "alias to data written elsewhere is not followed", src: "overrides:\n  prod: &p\n    # @require\n    a: 2\ndata: *p\n"},
		{name: "merge key not followed", src: "data:\n  base: &b\n    # @require\n    x: 1\n  other:\n    <<: *b\n",
			want: []Annotation{ann(3, "require", "", "base", "x")}},
		{name: "keys inside lists are not annotated", src: "data:\n  l:\n    - # @require\n      x: 1\n"},
		{name: "block scalar text is not a comment", src: "data:\n  s: |\n    # @require\n  b: 1\n"},
		{name: "flow map", src: "data: {\n  # @require\n  a: 1}\n",
			want: []Annotation{ann(2, "require", "", "a")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnnotations([]byte(tt.src), "d.yaml")
			if err != nil {
				t.Fatalf("ParseAnnotations: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseAnnotationsSyntaxError(t *testing.T) {
	_, err := ParseAnnotations([]byte("data: [\n"), "bad.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), "bad.yaml:") {
		t.Fatalf("want a located syntax error, got %v", err)
	}
}

func TestParseFillsAnnotations(t *testing.T) {
	src := "data:\n  # @require\n  a: \"\"\n  m:\n    # @validate isIP(value)\n    ip: x\noverrides:\n  d:\n    # @require\n    a: y\nccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n"
	doc, err := Parse([]byte(src), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []Annotation{ann(2, "require", "", "a"), ann(5, "validate", "isIP(value)", "m", "ip")}
	if !reflect.DeepEqual(doc.Annotations, want) {
		t.Fatalf("got %#v\nwant %#v", doc.Annotations, want)
	}
}

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		name    string
		comment string
		keyLine int
		want    []Annotation
	}{
		{name: "empty", comment: "", keyLine: 3},
		{name: "prose only", comment: "# just words", keyLine: 3},
		{name: "line numbers count up to the key", comment: "# @require\n\n# @validate x", keyLine: 10,
			want: []Annotation{{Line: 7, Directive: "require"}, {Line: 9, Directive: "validate", Arg: "x"}}},
		{name: "double hash and tabs", comment: "##\t@validate\tisInt(value)", keyLine: 2,
			want: []Annotation{{Line: 1, Directive: "validate", Arg: "isInt(value)"}}},
		{name: "word with dash and underscore", comment: "# @no_log-ever", keyLine: 2,
			want: []Annotation{{Line: 1, Directive: "no_log-ever"}}},
		{name: "impossible line clamps to the key", comment: "# @require\n# x", keyLine: 1,
			want: []Annotation{{Line: 1, Directive: "require"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseDirectives(tt.comment, tt.keyLine); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// FuzzParseDirectives checks that directive parsing never panics and that
// every result is well formed.
func FuzzParseDirectives(f *testing.F) {
	for _, s := range []string{"# @require", "# @validate isIP(value)\n\n# @required", "#@", "# @", "@x\ty", "# a@b", "\n\n\n# @z"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, comment string, keyLine int) {
		for _, a := range ParseDirectives(comment, keyLine) {
			if a.Directive == "" || a.Directive == "required" || strings.ContainsAny(a.Directive, " \t\n@") {
				t.Fatalf("bad directive %q from %q", a.Directive, comment)
			}
			if a.Arg != strings.TrimSpace(a.Arg) || strings.Contains(a.Arg, "\n") {
				t.Fatalf("untrimmed or multi-line arg %q", a.Arg)
			}
			if keyLine >= 1 && (a.Line < 1 || a.Line > keyLine) {
				t.Fatalf("line %d outside 1..%d", a.Line, keyLine)
			}
		}
	})
}

// FuzzParseAnnotations checks that no document makes the comment walk
// panic and that every annotation has a path.
func FuzzParseAnnotations(f *testing.F) {
	for _, s := range []string{
		"data:\n  # @require\n  a: 1\n",
		"data:\n  a:\n    # @validate isIP(value)\n    b: x\n",
		"data: &a {<<: *a}\n",
		"data: {b: &x [*x]}\n",
		`{"data": {"a": 1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		anns, err := ParseAnnotations(src, "fuzz.yaml")
		if err != nil {
			return
		}
		for _, a := range anns {
			if len(a.Path) == 0 || a.Line < 1 {
				t.Fatalf("bad annotation %#v", a)
			}
		}
	})
}
