package manifest

import (
	"errors"
	"testing"
)

// FuzzParse checks that no input panics and that every failure is a
// located *Error.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"ccm:\n  resources:\n    - exec:\n        - /bin/true: {}\n",
		"ccm:\n  resources:\n    - file:\n        - defaults: {owner: a, control: {if: x}}\n        - /x: {content: \"a\\n\", control: {unless: y}}\n",
		"ccm:\n  resources:\n    - exec: {name: x, health_checks: [{command: c, tries: 2, try_sleep: 1d}]}\n",
		"data: &a {<<: *a}\nccm: {resources: [{exec: [{a: {}}]}]}\n",
		"hierarchy: {order: [a], merge: deep}\noverrides: {a: {}}\nccm: {resources_jet_file: x.jet}\n",
		`{"ccm": {"resources": [{"exec": [{"a": {"require": ["exec#b"]}}]}]}}`,
		"a: &x [*x]\n",
		"- !!binary aGVsbG8=\n",
		"a: 1\nb: \"oops\nc: 3\n",
		"ccm:\n\tresources: []\n",
		"a: [1, 2\nb: {x: 1\n",
		"a: 1\nb: value: x\n  c: d: e\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		doc, err := Parse(src, "fuzz.yaml")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error is not a *Error: %T %v", err, err)
			}
			if lines := lineCount(src); e.Line > lines || e.Line < 0 || e.Column < 0 {
				t.Fatalf("error placed at %d:%d in a document of %d lines: %v", e.Line, e.Column, lines, err)
			}
			return
		}
		if len(doc.Resources) == 0 && doc.ResourcesJetFile == "" {
			t.Fatal("a parsed manifest without resources")
		}
		for _, r := range doc.Resources {
			if r.Properties == nil || r.Name == "" || !validType(r.Type) {
				t.Fatalf("bad resource %#v", r)
			}
			for _, ref := range append(r.Require, r.Subscribe...) {
				if _, err := ParseRef(ref); err != nil {
					t.Fatalf("unchecked reference %q: %v", ref, err)
				}
			}
		}
	})
}

// FuzzParseRef checks that ParseRef never panics and round-trips.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"file#/etc/motd", "exec#a#b", "#", "a#", "A#b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if back := r.Type + "#" + r.Name; err == nil && back != s {
			t.Fatalf("round trip: %q -> %q", s, back)
		}
	})
}

// FuzzParseDuration checks that ParseDuration never panics.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1d", "1w2d3h4m5s", "-1.5d", "10", "1d1y", "9223372036854775807ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseDuration(s)
	})
}
