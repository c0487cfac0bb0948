package template

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStrict: a key of Facts, Data or Environ that does not exist is an
// error naming the expression and the key and suggesting a default; a key
// that exists with a null value renders "". ?., ??, lookup with a default
// and Jet's isset opt out.
func TestStrict(t *testing.T) {
	x := New(Env{
		Facts:   map[string]any{"host": map[string]any{"name": "web01"}},
		Data:    map[string]any{"subdir": nil, "nested": map[string]any{"k": "v"}, "n": 0},
		Environ: map[string]string{"HOME": "/root"},
	})
	fails := []struct {
		name, in string
		want     []string
	}{
		{"data root", "{{ Data.root }}/x", []string{`expression "Data.root"`, `Data has no key "root"`, `lookup("data.root", DEFAULT)`, "Data.root ?? DEFAULT", "it has n, nested, subdir"}},
		{"dollar form", "rm -rf /srv/${ Data.sub }/", []string{`Data has no key "sub"`}},
		{"nested", "{{ Data.nested.j }}", []string{`Data.nested has no key "j"`, `lookup("data.nested.j", DEFAULT)`}},
		{"through null", "{{ Data.subdir.x }}", []string{"Data.subdir is null, so it has no key x"}},
		{"fact", "{{ Facts.host.fqdn }}", []string{`Facts.host has no key "fqdn"`, `lookup("facts.host.fqdn", DEFAULT)`}},
		{"environ", "{{ Environ.NOPE }}", []string{`Environ has no key "NOPE"`, `lookup("environ.NOPE", DEFAULT)`}},
		{"index form", `{{ Data["root"] }}`, []string{`Data has no key "root"`}},
		{"computed index", `{{ Data["ro" + "ot"] }}`, []string{`Data has no key "root"`, "Data.root ?? DEFAULT"}},
		{"in an operation", "{{ Data.root + '/x' }}", []string{`Data has no key "root"`}},
		{"in a call argument", "{{ upper(Data.root) }}", []string{`Data has no key "root"`}},
		{"last operand of ?? is strict", "{{ Data.a ?? Data.b }}", []string{`Data has no key "b"`}},
		{"lookup without default", "{{ lookup('data.root') }}", []string{"not found"}},
		{"jet", "{{ jet('a\\n[[ Data.root ]]') }}", []string{"jet inline.jet:2", `Data has no key "root"`, `isset(Data.root) ? Data.root : DEFAULT`}},
		{"jet nested", "{{ jet('[[ data.nested.j ]]') }}", []string{`Data.nested has no key "j"`, `lookup("data.nested.j", DEFAULT)`}},
		{"jet environ", "{{ jet('[[ Environ.NOPE ]]') }}", []string{`Environ has no key "NOPE"`}},
	}
	for _, tc := range fails {
		t.Run(tc.name, func(t *testing.T) {
			got, err := x.Expand(tc.in)
			if err == nil {
				t.Fatalf("Expand(%q) = %#v, want an error", tc.in, got)
			}
			if tc.name != "lookup without default" && !errors.Is(err, ErrMissing) {
				t.Errorf("error %v is not ErrMissing", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n got %s\nwant it to contain %s", err, w)
				}
			}
		})
	}
	works := []struct {
		name, in string
		want     any
	}{
		{"null renders empty", "rm -rf /srv/work/{{ Data.subdir }}", "rm -rf /srv/work/"},
		{"zero is a value", "{{ Data.n }}", 0},
		{"coalesce", "{{ Data.root ?? '/srv' }}/x", "/srv/x"},
		{"coalesce three", "{{ Data.a ?? Data.b ?? 'c' }}", "c"},
		{"coalesce four", "{{ Data.a ?? Data.b.x ?? Data.c ?? 'd' }}", "d"},
		{"coalesce to a present key", "{{ Data.a ?? Data.nested.k }}", "v"},
		{"coalesce environ", "{{ Environ.NOPE ?? 'd' }}", "d"},
		{"coalesce nested", "{{ Data.a.b.c ?? 'd' }}", "d"},
		{"optional chain", "[{{ Data.a?.b }}]", "[]"},
		{"optional then plain", "[{{ Data?.a.b }}]", "[]"},
		{"lookup default", "{{ lookup('data.root', '/srv') }}", "/srv"},
		{"in operator", "{{ 'root' in Data }}", false},
		{"get builtin", "[{{ get(Data, 'root') }}]", "[]"},
		{"present", "{{ Facts.host.name }}:{{ Environ.HOME }}", "web01:/root"},
		{"jet isset", `{{ jet('[[ isset(Data.root) ? Data.root : "/srv" ]]') }}`, "/srv"},
		{"jet lookup default", `{{ jet('[[ lookup("data.root", "/srv") ]]') }}`, "/srv"},
		{"jet null", "<{{ jet('[[ Data.subdir ]]') }}>", "<>"},
	}
	for _, tc := range works {
		t.Run(tc.name, func(t *testing.T) {
			got, err := x.Expand(tc.in)
			if err != nil {
				t.Fatalf("Expand(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("Expand(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
	t.Run("control", func(t *testing.T) {
		if _, err := x.Bool("Data.enabled == true"); !errors.Is(err, ErrMissing) {
			t.Fatalf("Bool error = %v, want ErrMissing", err)
		}
		if ok, err := x.Bool("Data.enabled ?? false"); err != nil || ok {
			t.Fatalf("Bool = %v, %v; want false, nil", ok, err)
		}
	})
	t.Run("confined scope says it has no environment", func(t *testing.T) {
		c := New(Env{NoEnviron: true})
		for _, in := range []string{"{{ Environ.HOME }}", "{{ jet('[[ Environ.HOME ]]') }}"} {
			_, err := c.String(in)
			if err == nil || strings.Count(err.Error(), "sees no environment variables") != 1 {
				t.Fatalf("%s: error = %v, want the confined hint once", in, err)
			}
		}
	})
	t.Run("jet include", func(t *testing.T) {
		dir := t.TempDir()
		files := map[string]string{
			"top.jet":      "top\n[[ include \"sub/part.jet\" ]]",
			"sub/part.jet": "part\n[[ Data.nested.k ]]\n[[ Data.absent ]]",
		}
		for name, text := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		j := New(Env{Data: map[string]any{"nested": map[string]any{"k": "v"}}, Dir: dir})
		_, err := j.Jet("top.jet", "", "")
		if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), `jet sub/part.jet:3: Data.absent: Data has no key "absent"`) {
			t.Fatalf("error = %v, want the include's file and line", err)
		}
	})
	t.Run("hiera", func(t *testing.T) {
		h := NewHiera(map[string]any{"env": "prod"})
		if k, ok, err := h.Key("role:{{ Facts.role }}"); err != nil || ok || k != "role:" {
			t.Fatalf("Key = %q, %v, %v; want a skipped entry", k, ok, err)
		}
		if _, err := h.Expand("{{ Facts.role }}"); !errors.Is(err, ErrMissing) {
			t.Fatalf("Expand error = %v, want ErrMissing", err)
		}
		if got, err := h.Expand("{{ Facts.env }}"); err != nil || got != "prod" {
			t.Fatalf("Expand = %v, %v", got, err)
		}
	})
}
