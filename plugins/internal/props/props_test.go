package props

import (
	"slices"
	"testing"
)

func TestGetters(t *testing.T) {
	p := map[string]any{
		"s": "x", "n": float64(8080), "f": 1.5, "b": true, "nil": nil,
		"list": []any{"a", "b"}, "ints": []any{float64(0), float64(2)}, "one": float64(3),
		"badlist": []any{"a", float64(1)}, "map": map[string]any{},
	}
	cases := []struct {
		name    string
		read    func(r *Reader) (any, bool)
		want    any
		wantOK  bool
		wantErr string
	}{
		{"string", func(r *Reader) (any, bool) { return r.String("s") }, "x", true, ""},
		{"string unset", func(r *Reader) (any, bool) { return r.String("none") }, "", false, ""},
		{"string null", func(r *Reader) (any, bool) { return r.String("nil") }, "", false, ""},
		{"string wrong type", func(r *Reader) (any, bool) { return r.String("n") }, "", false, `property "n" must be a string, got a number`},
		{"text from number", func(r *Reader) (any, bool) { return r.Text("n") }, "8080", true, ""},
		{"text from float", func(r *Reader) (any, bool) { return r.Text("f") }, "1.5", true, ""},
		{"text from bool", func(r *Reader) (any, bool) { return r.Text("b") }, "true", true, ""},
		{"text from map", func(r *Reader) (any, bool) { return r.Text("map") }, "", false, `property "map" must be a string, got a map`},
		{"bool", func(r *Reader) (any, bool) { return r.Bool("b") }, true, true, ""},
		{"bool wrong type", func(r *Reader) (any, bool) { return r.Bool("s") }, false, false, `property "s" must be a boolean, got a string`},
		{"string list", func(r *Reader) (any, bool) { l, ok := r.StringList("list"); return len(l), ok }, 2, true, ""},
		{"string list bad item", func(r *Reader) (any, bool) { l, ok := r.StringList("badlist"); return len(l), ok }, 0, false, `property "badlist" item 1 must be a string, got a number`},
		{"string list not a list", func(r *Reader) (any, bool) { l, ok := r.StringList("s"); return len(l), ok }, 0, false, `property "s" must be a list of strings, got a string`},
		{"int list", func(r *Reader) (any, bool) { l, ok := r.IntList("ints"); return slices.Equal(l, []int{0, 2}), ok }, true, true, ""},
		{"int list from one int", func(r *Reader) (any, bool) { l, ok := r.IntList("one"); return slices.Equal(l, []int{3}), ok }, true, true, ""},
		{"int list fractional", func(r *Reader) (any, bool) { l, ok := r.IntList("f"); return len(l), ok }, 0, false, `property "f" must be a list of integers, got a number`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := New(p)
			got, ok := tc.read(r)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("got %#v, %v; want %#v, %v", got, ok, tc.want, tc.wantOK)
			}
			errs := r.Errors()
			if tc.wantErr == "" && len(errs) > 0 || tc.wantErr != "" && (len(errs) != 1 || errs[0] != tc.wantErr) {
				t.Fatalf("errors %q, want %q", errs, tc.wantErr)
			}
		})
	}
}

func TestUnknown(t *testing.T) {
	cases := []struct {
		name  string
		props map[string]any
		read  []string
		want  []string
	}{
		{"all read", map[string]any{"a": 1, "b": nil}, []string{"a", "b"}, nil},
		{"typo gets a hint", map[string]any{"contnet": "x"}, []string{"content", "owner"}, []string{`unknown property "contnet"; did you mean "content"?`}},
		{"far from anything", map[string]any{"zzz": 1}, []string{"content"}, []string{`unknown property "zzz"`}},
		{"sorted", map[string]any{"b2": 1, "a1": 1}, nil, []string{`unknown property "a1"`, `unknown property "b2"`}},
		{"spelling variant", map[string]any{"refresh-only": true}, []string{"refreshonly", "refresh_only"}, []string{`unknown property "refresh-only"; did you mean "refresh_only"?`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := New(tc.props)
			r.Known(tc.read...)
			r.Unknown()
			if !slices.Equal(r.Errors(), tc.want) {
				t.Fatalf("errors %q, want %q", r.Errors(), tc.want)
			}
		})
	}
}

func TestHasTemplate(t *testing.T) {
	cases := map[string]bool{
		"plain": false, "{{ Data.x }}": true, "${ lookup('a') }": true, "a $b {c}": false, "pre {{x}} post": true,
	}
	for in, want := range cases {
		if got := HasTemplate(in); got != want {
			t.Errorf("HasTemplate(%q) = %v, want %v", in, got, want)
		}
	}
}
