package template

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func testEnv(t *testing.T) Env {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"motd.txt":   "hello\n",
		"motd.templ": "Welcome to {{ Facts.host.info.hostname }} on port ${ Data.port }\n",
		"port.templ": "{{ Data.port }}",
		"loop.templ": "{{ template('loop.templ') }}",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return Env{
		Facts: map[string]any{
			"host": map[string]any{"info": map[string]any{"hostname": "web01", "platformFamily": "debian"}},
			"env":  "prod",
		},
		Data: map[string]any{
			"port":    8080,
			"ratio":   0.5,
			"big":     1e6,
			"name":    "httpd",
			"on":      true,
			"list":    []any{"a", 1},
			"nested":  map[string]any{"k": "v"},
			"nothing": nil,
		},
		Environ: map[string]string{"PLAIN": "plain value", "HOME": "/root"},
		Dir:     dir,
	}
}

func TestExpandStrings(t *testing.T) {
	x := New(testEnv(t))
	tests := []struct {
		name string
		in   string
		want any
	}{
		{name: "no template is unchanged", in: "plain text", want: "plain text"},
		{name: "lone brace is not a template", in: "awk '{print $1}'", want: "awk '{print $1}'"},
		{name: "single expression keeps int", in: "${ Data.port }", want: 8080},
		{name: "braces form keeps int", in: "{{ Data.port }}", want: 8080},
		{name: "surrounding whitespace still native", in: "  {{ Data.port }} \n", want: 8080},
		{name: "a string keeps its surrounding whitespace", in: "{{ Data.name }}\n", want: "httpd\n"},
		{name: "single expression keeps list", in: "{{ Data.list }}", want: []any{"a", 1}},
		{name: "single expression keeps bool", in: "${ Data.on }", want: true},
		{name: "single expression nil", in: "{{ Data.nothing }}", want: nil},
		{name: "text with int", in: "port {{ Data.port }}", want: "port 8080"},
		{name: "two expressions", in: "{{ Data.name }}:${ Data.port }", want: "httpd:8080"},
		{name: "null key renders empty", in: "[{{ Data.nothing }}]", want: "[]"},
		{name: "list renders JSON", in: "l={{ Data.list }}", want: `l=["a",1]`},
		{name: "map renders JSON", in: "m={{ Data.nested }}", want: `m={"k":"v"}`},
		{name: "float renders plainly", in: "r={{ Data.ratio }} b={{ Data.big }}", want: "r=0.5 b=1000000"},
		{name: "dollar double brace is a literal dollar", in: "${{ Data.port }}", want: "$8080"},
		{name: "quotes hide closing braces", in: `{{ "}}" + Data.name }}`, want: "}}httpd"},
		{name: "single quotes hide closing brace", in: `${ '}' + Data.name }`, want: "}httpd"},
		{name: "escaped quote inside string", in: `{{ "a\"}}" }}`, want: `a"}}`},
		{name: "nested braces in dollar form", in: `${ {"a": {"b": 1}}.a.b }`, want: 1},
		{name: "nested braces in double form", in: `{{ {"a": {"b": 2}}.a.b }}`, want: 2},
		{name: "facts by JSON name", in: "{{ Facts.host.info.platformFamily }}", want: "debian"},
		{name: "environ", in: "${ Environ.HOME }/x", want: "/root/x"},
		{name: "lookup fact", in: "{{ lookup('facts.host.info.hostname') }}", want: "web01"},
		{name: "lookup int stays int", in: "{{ lookup('data.port') }}", want: 8080},
		{name: "lookup float", in: "{{ lookup('data.ratio') }}", want: 0.5},
		{name: "lookup integral float becomes int", in: "{{ lookup('data.big') }}", want: 1000000},
		{name: "lookup list", in: "{{ lookup('data.list') }}", want: []any{"a", 1}},
		{name: "lookup environ", in: "{{ lookup('environ.PLAIN') }}", want: "plain value"},
		{name: "lookup env alias", in: "{{ lookup('env.PLAIN') }}", want: "plain value"},
		{name: "lookup default", in: "{{ lookup('data.nope', 'dflt') }}", want: "dflt"},
		{name: "lookup default keeps type", in: "{{ lookup('data.nope', 3) }}", want: 3},
		{name: "expr builtins", in: "{{ upper(Data.name) }}-{{ Data.port > 80 ? 'hi' : 'lo' }}", want: "HTTPD-hi"},
		{name: "nil coalescing", in: "{{ Data.missing ?? 'fallback' }}", want: "fallback"},
		{name: "readFile relative to Dir", in: "{{ readFile('motd.txt') }}", want: "hello\n"},
		{name: "file alias", in: "x{{ file('motd.txt') }}", want: "xhello\n"},
		{name: "template file", in: "{{ template('motd.templ') }}", want: "Welcome to web01 on port 8080\n"},
		{name: "template file native", in: "{{ template('port.templ') }}", want: 8080},
		{name: "template string", in: "{{ template('a {{ Data.name }}') }}", want: "a httpd"},
		{name: "template plain string", in: "{{ template('plain') }}", want: "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x.Expand(tt.in)
			if err != nil {
				t.Fatalf("Expand(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Expand(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestExpandErrors(t *testing.T) {
	x := New(testEnv(t))
	tests := []struct {
		name     string
		in       any
		sentinel error
		want     string
	}{
		{name: "unknown variable", in: "{{ foo }}", want: `expression "foo": unknown name foo (column 1)`},
		{name: "syntax error", in: "x ${ Data.port + }", want: `expression "Data.port +"`},
		{name: "unterminated double", in: "a {{ Data.port", want: `unterminated expression " Data.port"; close it with "}}"`},
		{name: "unterminated dollar", in: "${ {", want: "unterminated expression"},
		{name: "unterminated quote", in: `{{ "abc }}`, want: "unterminated \" quote"},
		{name: "empty expression", in: "a {{ }} b", want: "empty expression at offset 2"},
		{name: "lookup missing", in: "{{ lookup('facts.nope') }}", sentinel: ErrNotFound, want: `lookup "facts.nope": not found; check the path`},
		{name: "lookup wrong arity", in: "{{ lookup() }}", want: "lookup takes a path"},
		{name: "lookup non-string", in: "{{ lookup(1) }}", want: "the path must be a string"},
		{name: "fetch from nil", in: "{{ Data.nothing.x }}", sentinel: ErrMissing, want: "Data.nothing is null, so it has no key x"},
		{name: "missing key", in: "{{ Data.missing.x }}", sentinel: ErrMissing, want: `Data has no key "missing"`},
		{name: "readFile missing", in: "{{ readFile('nope.txt') }}", sentinel: os.ErrNotExist, want: `readFile "nope.txt"`},
		{name: "template jet file missing", in: "{{ template('x.jet') }}", sentinel: os.ErrNotExist, want: `jet "x.jet"`},
		{name: "jet unknown identifier", in: "{{ jet('[[ x ]]') }}", want: `jet inline.jet:1: identifier "x" is not defined; Jet sees Facts, Data, Environ`},
		{name: "kvGet", in: "{{ kvGet('b', 'k') }}", sentinel: ErrNotSupported, want: "kvGet"},
		{name: "template recursion", in: "{{ template('loop.templ') }}", want: "nested deeper than 10 levels"},
		{name: "path in nested map", in: map[string]any{"a": map[string]any{"b": []any{"ok", "{{ foo }}"}}}, want: "a.b[1]: expression \"foo\""},
		{name: "path in string map", in: map[string]any{"environment": map[string]string{"X": "{{ foo }}"}}, want: "environment.X: expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := x.Expand(tt.in)
			if err == nil {
				t.Fatalf("want error containing %q", tt.want)
			}
			if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
				t.Errorf("error %q does not wrap %v", err, tt.sentinel)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n got %q\nwant it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestExpandStructures(t *testing.T) {
	x := New(testEnv(t))
	in := map[string]any{
		"port":  "{{ Data.port }}",
		"mode":  "0644",
		"n":     7,
		"ok":    true,
		"none":  nil,
		"list":  []any{"${ Data.name }", 1.5, map[string]any{"deep": "{{ Data.on }}"}},
		"env":   map[string]string{"A": "{{ Data.port }}"},
		"args":  []string{"{{ Data.list }}"},
		"{{k}}": "keys are not expanded",
	}
	snapshot := map[string]any{
		"port": "{{ Data.port }}", "mode": "0644", "n": 7, "ok": true, "none": nil,
		"list":  []any{"${ Data.name }", 1.5, map[string]any{"deep": "{{ Data.on }}"}},
		"env":   map[string]string{"A": "{{ Data.port }}"},
		"args":  []string{"{{ Data.list }}"},
		"{{k}}": "keys are not expanded",
	}
	got, err := x.Expand(in)
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	want := map[string]any{
		"port": 8080, "mode": "0644", "n": 7, "ok": true, "none": nil,
		"list":  []any{"httpd", 1.5, map[string]any{"deep": true}},
		"env":   map[string]string{"A": "8080"},
		"args":  []string{`["a",1]`},
		"{{k}}": "keys are not expanded",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Expand:\n got %#v\nwant %#v", got, want)
	}
	if !reflect.DeepEqual(in, snapshot) {
		t.Fatalf("input was mutated: %#v", in)
	}
	// The result must not share containers with the input.
	got.(map[string]any)["list"].([]any)[0] = "changed"
	if in["list"].([]any)[0] != "${ Data.name }" {
		t.Fatal("result shares a list with the input")
	}
}

func TestString(t *testing.T) {
	x := New(testEnv(t))
	tests := []struct {
		name, in, want string
	}{
		{name: "plain", in: "abc", want: "abc"},
		{name: "int as text", in: "{{ Data.port }}", want: "8080"},
		{name: "list as JSON", in: " {{ Data.list }}", want: ` ["a",1]`},
		{name: "nil as empty", in: "{{ Data.nothing }}", want: ""},
		{name: "bool", in: "${ Data.on }", want: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x.String(tt.in)
			if err != nil {
				t.Fatalf("String: %v", err)
			}
			if got != tt.want {
				t.Fatalf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBool(t *testing.T) {
	x := New(testEnv(t))
	tests := []struct {
		name     string
		in       string
		want     bool
		sentinel error
		errWant  string
	}{
		{name: "true literal", in: "true", want: true},
		{name: "data bool", in: "Data.on", want: true},
		{name: "comparison", in: `Facts.host.info.platformFamily == "redhat"`, want: false},
		{name: "lookup", in: `lookup("facts.env") == "prod"`, want: true},
		{name: "env alias", in: `lookup("env.PLAIN", "") != ""`, want: true},
		{name: "not a bool", in: "Data.port", sentinel: ErrNotBool, errWant: "gave int 8080"},
		{name: "nil is not false", in: "Data.nothing", sentinel: ErrNotBool, errWant: "gave nil"},
		{name: "missing is an error", in: "Data.missing", sentinel: ErrMissing, errWant: `lookup("data.missing", DEFAULT)`},
		{name: "wrapped in braces", in: "{{ Data.on }}", errWant: `write "Data.on" without the {{ }}`},
		{name: "wrapped in dollar", in: "${ Data.on }", errWant: `write "Data.on" without`},
		{name: "empty", in: "  ", errWant: "empty control expression"},
		{name: "compile error", in: "Data.on &&", errWant: `expression "Data.on &&"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x.Bool(tt.in)
			if tt.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errWant) {
					t.Fatalf("Bool(%q) error = %v, want it to contain %q", tt.in, err, tt.errWant)
				}
				if tt.sentinel != nil && !errors.Is(err, tt.sentinel) {
					t.Fatalf("error %q does not wrap %v", err, tt.sentinel)
				}
				return
			}
			if err != nil {
				t.Fatalf("Bool(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("Bool(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	x := New(testEnv(t))
	tests := []struct {
		name  string
		path  string
		want  any
		found bool
	}{
		{name: "fact", path: "facts.host.info.hostname", want: "web01", found: true},
		{name: "data int", path: "data.port", want: 8080, found: true},
		{name: "data map", path: "data.nested", want: map[string]any{"k": "v"}, found: true},
		{name: "data null exists", path: "data.nothing", want: nil, found: true},
		{name: "environ", path: "environ.HOME", want: "/root", found: true},
		{name: "env alias", path: "env.HOME", want: "/root", found: true},
		{name: "gjson modifier", path: "data.list.#", want: 2, found: true},
		{name: "missing", path: "facts.nope"},
		{name: "capitalised root is not a root", path: "Facts.env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := x.Lookup(tt.path)
			if found != tt.found || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Lookup(%q) = %#v, %v; want %#v, %v", tt.path, got, found, tt.want, tt.found)
			}
		})
	}
}

func TestHiera(t *testing.T) {
	x := NewHiera(map[string]any{"env": "prod", "hostname": "web01", "empty": ""})
	keys := []struct {
		name   string
		in     string
		want   string
		wantOK bool
	}{
		{name: "literal entry counts", in: "default", want: "default", wantOK: true},
		{name: "fact present", in: "env:${ lookup('facts.env') }", want: "env:prod", wantOK: true},
		{name: "fact missing gives empty and skips", in: "role:${ lookup('facts.role') }", want: "role:", wantOK: false},
		{name: "empty fact skips", in: "e:{{ Facts.empty }}", want: "e:", wantOK: false},
		{name: "one of two present counts", in: "{{ lookup('facts.role') }}-{{ Facts.hostname }}", want: "-web01", wantOK: true},
	}
	for _, tt := range keys {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := x.Key(tt.in)
			if err != nil {
				t.Fatalf("Key(%q): %v", tt.in, err)
			}
			if got != tt.want || ok != tt.wantOK {
				t.Fatalf("Key(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
	t.Run("data and files are not available", func(t *testing.T) {
		for _, in := range []string{"{{ Data.x }}", "{{ readFile('x') }}", "{{ Environ.HOME }}", "{{ template('x') }}"} {
			if _, err := x.Expand(in); err == nil || !strings.Contains(err.Error(), "unknown") {
				t.Errorf("Expand(%q) error = %v, want an unknown-name error", in, err)
			}
		}
	})
	t.Run("missing lookup in a value fails", func(t *testing.T) {
		_, err := x.Expand(map[string]any{"a": "{{ lookup('facts.nope') }}", "b": "${ lookup('facts.env') }"})
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("error = %v, want ErrNotFound", err)
		}
		got, err := x.Expand(map[string]any{"a": "{{ lookup('facts.nope', '') }}", "b": "${ lookup('facts.env') }"})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]any{"a": "", "b": "prod"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %#v want %#v", got, want)
		}
	})
}

func TestHasTemplate(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", false}, {"plain", false}, {"{", false}, {"a { b } c", false}, {"$", false}, {"$ {", false},
		{"{{", true}, {"${", true}, {"x {{ y }}", true}, {"x ${y}", true}, {"{ {{", true}, {"a{b${", true},
	}
	for _, tt := range tests {
		if got := HasTemplate(tt.in); got != tt.want {
			t.Errorf("HasTemplate(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestPlainStringsDoNotAllocate(t *testing.T) {
	x := New(Env{})
	var v any = "/etc/httpd/conf.d/listen.conf"
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := x.Expand(v); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Expand of a plain string allocated %v times", allocs)
	}
}

// Expanders are used from several goroutines by the engine; run with -race.
func TestConcurrentUse(t *testing.T) {
	x := New(testEnv(t))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				v, err := x.Expand(map[string]any{"a": "{{ lookup('data.port') }}", "b": "g{{ Data.port + " + string(rune('0'+g)) + " }}", "i": i})
				if err != nil {
					t.Error(err)
					return
				}
				if v.(map[string]any)["a"] != 8080 {
					t.Errorf("got %v", v)
					return
				}
			}
		}()
	}
	wg.Wait()
}
