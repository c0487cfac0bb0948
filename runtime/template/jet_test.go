package template

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func jetEnv(t *testing.T) Env {
	t.Helper()
	env := testEnv(t)
	files := map[string]string{
		"list.jet":     "[[ range i, v := Data.list ]]- [[ i ]]: [[ v ]] & <b>\n[[ end ]]",
		"vars.jet":     "[[ Facts.env ]] [[ facts.env ]] [[ Data.name ]] [[ data.port ]] [[ Environ.HOME ]] [[ environ.HOME ]]",
		"funcs.jet":    "[[ lookup(\"data.port\") ]] [[ lookup(\"data.gone\", \"dflt\") ]] [[ readFile(\"motd.txt\") ]][[ file(\"motd.txt\") ]][[ template(\"port.templ\") ]]",
		"include.jet":  "top [[ include \"sub/part.jet\" ]]",
		"sub/part.jet": "part [[ Data.name ]]",
		"emitccm.jet":  "name: {{ Data.name }} [[ Data.name ]]",
		"self.jet":     "[[ template(\"self.jet\") ]]",
		"badparse.jet": "ok\n[[ if ]]\n",
		"badrun.jet":   "ok\nok\n[[ nosuch.thing ]]\n",
		"badlook.jet":  "[[ lookup(\"data.gone\") ]]",
	}
	for name, content := range files {
		path := filepath.Join(env.Dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

func TestJet(t *testing.T) {
	x := New(jetEnv(t))
	tests := []struct {
		name        string
		s           string
		left, right string
		want        string
	}{
		{name: "loop over data, no HTML escaping", s: "list.jet", want: "- 0: a & <b>\n- 1: 1 & <b>\n"},
		{name: "variables in both spellings", s: "vars.jet", want: "prod prod httpd 8080 /root /root"},
		{name: "functions", s: "funcs.jet", want: "8080 dflt hello\nhello\n8080"},
		{name: "include is relative to the jet file", s: "include.jet", want: "top part httpd"},
		{name: "ccm templates pass through", s: "emitccm.jet", want: "name: {{ Data.name }} httpd"},
		{name: "inline text", s: "port [[ Data.port ]]", want: "port 8080"},
		{name: "custom delimiters", s: "port <% Data.port %> [[ x ]]", left: "<%", right: "%>", want: "port 8080 [[ x ]]"},
		{name: "null key renders empty", s: "<[[ Data.nothing ]]>", want: "<>"},
		{name: "isset guards a missing key", s: `[[ isset(Data.absent) ? Data.absent : "d" ]]`, want: "d"},
		{name: "lowercase spelling", s: "[[ data.nested.k ]]", want: "v"},
		{name: "no action is literal", s: "{{ Data.port }}", want: "{{ Data.port }}"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := x.Jet(tc.s, tc.left, tc.right)
			if err != nil {
				t.Fatalf("Jet(%q): %v", tc.s, err)
			}
			if got != tc.want {
				t.Errorf("Jet(%q) = %q, want %q", tc.s, got, tc.want)
			}
		})
	}
}

func TestJetFromExpressions(t *testing.T) {
	x := New(jetEnv(t))
	tests := []struct {
		name string
		in   string
		want any
	}{
		{name: "jet with defaults", in: "{{ jet('[[ Data.port ]]') }}", want: "8080"},
		{name: "jet with delimiters", in: "${ jet('<% Data.name %>', '<%', '%>') }", want: "httpd"},
		{name: "jet file", in: "{{ jet('vars.jet') }}", want: "prod prod httpd 8080 /root /root"},
		{name: "template of a jet file", in: "{{ template('include.jet') }}", want: "top part httpd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := x.Expand(tc.in)
			if err != nil {
				t.Fatalf("Expand(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("Expand(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestJetErrors(t *testing.T) {
	x := New(jetEnv(t))
	tests := []struct {
		name     string
		call     func() error
		want     string
		sentinel error
	}{
		{name: "parse error names file and line", call: jetCall(x, "badparse.jet"), want: "jet badparse.jet:2: "},
		{name: "runtime error names file and line", call: jetCall(x, "badrun.jet"), want: "jet badrun.jet:3: "},
		{name: "inline parse error", call: jetCall(x, "[[ 1 +"), want: "jet inline.jet:1: "},
		{name: "function error keeps its sentinel", call: jetCall(x, "badlook.jet"), want: `jet badlook.jet: lookup "data.gone"`, sentinel: ErrNotFound},
		{name: "missing file", call: jetCall(x, "nope.jet"), want: `jet "nope.jet": `, sentinel: os.ErrNotExist},
		{name: "self include is bounded", call: jetCall(x, "self.jet"), want: "nested deeper than 10 levels"},
		{name: "kvGet unsupported", call: jetCall(x, "[[ kvGet(\"b\", \"k\") ]]"), want: "kvGet", sentinel: ErrNotSupported},
		{name: "bad arity from expressions", call: expandCall(x, "{{ jet('a', 'b') }}"), want: "jet takes a template"},
		{name: "empty delimiters", call: expandCall(x, "{{ jet('a', '', ']]') }}"), want: "delimiters must not be empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("error %q is not %v", err, tc.sentinel)
			}
		})
	}
}

func jetCall(x *Expander, s string) func() error {
	return func() error { _, err := x.Jet(s, "", ""); return err }
}

func expandCall(x *Expander, s string) func() error {
	return func() error { _, err := x.Expand(s); return err }
}

// FuzzJet checks that no Jet template text panics the renderer.
func FuzzJet(f *testing.F) {
	for _, s := range []string{"[[ Data.x ]]", "[[ range v := Data.l ]][[ v ]][[ end ]]", "[[", "[[ if ]]", "[[ Data.l[9] ]]",
		"[[ include \"x.jet\" ]]", "[[ lookup(1) ]]", "[[ 1/0 ]]", "[[ Data.m.k.z ]]", "[[ template(\"[[ 1 ]]\") ]]"} {
		f.Add(s)
	}
	x := New(Env{Data: map[string]any{"x": 1, "l": []any{1}, "m": map[string]any{"k": "v"}}, Dir: f.TempDir()})
	f.Fuzz(func(t *testing.T, s string) {
		if strings.HasSuffix(s, ".jet") {
			return
		}
		_, _ = x.Jet(s, "", "")
	})
}
