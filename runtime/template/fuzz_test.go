package template

import (
	"testing"
)

// FuzzExpand checks that no template string panics the expander, in both
// the full and the Hiera modes, and that strings without templates come
// back unchanged.
func FuzzExpand(f *testing.F) {
	seeds := []string{
		"plain", "{{ Data.port }}", "${ Data.port }", "${{ x }}", "a {{ 'b}}' }} c",
		`${ {"a": {"b": 1}}.a.b }`, "{{ lookup('facts.x', 1) }}", "{{ lookup('env.HOME') }}",
		"{{ template('{{ 1 }}') }}", "{{", "${", "{{ }}", "${ '", "{{ `}}` }}", "{{ Data.list[5] }}",
		"{{ 1/0 }}", "{{ readFile('') }}", "{{ template('x.jet') }}", "{{ now() }}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	dir := f.TempDir()
	full := New(Env{
		Facts:   map[string]any{"x": 1, "host": map[string]any{"info": map[string]any{"hostname": "h"}}},
		Data:    map[string]any{"port": 80, "list": []any{1, "a"}},
		Environ: map[string]string{"HOME": "/root"},
		Dir:     dir,
	})
	hiera := NewHiera(map[string]any{"x": 1})
	f.Fuzz(func(t *testing.T, s string) {
		v, err := full.Expand(s)
		if err == nil && !HasTemplate(s) && v != s {
			t.Fatalf("plain string changed: %q -> %#v", s, v)
		}
		_, _ = full.String(s)
		_, _ = full.Bool(s)
		_, _, _ = hiera.Key(s)
		_, _ = hiera.Expand(s)
	})
}
