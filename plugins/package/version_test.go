package main

import "testing"

// Orderings checked against dpkg --compare-versions (deb-version(7) and
// dpkg's own t/version test table).
func TestCompareDebian(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       int
	}{
		{"equal", "1.0", "1.0", 0},
		{"missing epoch is zero", "0:1.0", "1.0", 0},
		{"epoch wins over upstream", "1:1.0", "2.0", 1},
		{"epoch numeric", "10:1", "9:1", 1},
		{"digit runs numeric", "1.10", "1.9", 1},
		{"leading zeros ignored", "1.01", "1.1", 0},
		{"tilde before end", "1.0~rc1", "1.0", -1},
		{"tilde before tilde-tilde", "1.0~~", "1.0~", -1},
		{"double tilde first", "1.0~~a", "1.0~", -1},
		{"letters before non-letters", "1.0a", "1.0+", -1},
		{"letters after end", "1.0a", "1.0", 1},
		{"plus after end", "1.0+b1", "1.0", 1},
		{"missing revision before revision", "9.1", "9.1-1", -1},
		{"revision numeric", "9.1-10", "9.1-9", 1},
		{"revision with tilde", "2.36-9+deb12u1", "2.36-9+deb12u10", -1},
		{"hyphen in upstream, last hyphen splits", "1.2-3-4", "1.2-3-10", -1},
		{"upstream decides before revision", "1.2-9", "1.10-1", -1},
		{"dot is a non-letter", "1.0.1", "1.0a", 1},
		{"real debian security bump", "1:2.38.1-5+deb12u3", "1:2.38.1-5+deb12u2", 1},
		{"ubuntu suffix", "1.2.3-1ubuntu1", "1.2.3-1", 1},
		{"backport tilde", "1.2.3-1~bpo12+1", "1.2.3-1", -1},
		{"uppercase before lowercase", "1.0A", "1.0a", -1},
		{"colon in upstream after epoch", "1:1:2", "1:1:1", 1},
		{"zero vs empty", "1.0", "1.00", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := compareDebian(tc.a, tc.b); got != tc.want {
				t.Fatalf("compareDebian(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := compareDebian(tc.b, tc.a); got != -tc.want {
				t.Fatalf("compareDebian(%q, %q) = %d, want %d (antisymmetry)", tc.b, tc.a, got, -tc.want)
			}
		})
	}
}

// Orderings from rpm's tests/rpmvercmp.at.
func TestRPMVerCmp(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       int
	}{
		{"equal", "1.0", "1.0", 0},
		{"longer newer", "1.0", "1.0.1", -1},
		{"numeric", "2.50", "2.5", 1},
		{"leading zeros", "1.01", "1.1", 0},
		{"separators alike", "1_0", "1.0", 0},
		{"letters byte-wise", "FC5", "fc4", -1},
		{"number beats letters", "2.0.1", "2.0a", 1},
		{"letters compare", "2.0a", "2.0b", -1},
		{"alpha vs numeric segment", "1.0a", "1.0.1", -1},
		{"trailing letters", "5.5p1", "5.5p10", -1},
		{"x beats nothing", "6.0.rc1", "6.0", 1},
		{"tilde before end", "1.0~rc1", "1.0", -1},
		{"tilde vs tilde", "1.0~rc1", "1.0~rc2", -1},
		{"double tilde", "1.0~~", "1.0~", -1},
		{"caret after end", "1.0^", "1.0", 1},
		{"caret before segment", "1.0^git1", "1.0.1", -1},
		{"caret vs caret", "1.0^git1", "1.0^git2", -1},
		{"caret vs tilde", "1.0^", "1.0~", 1},
		{"release part", "9.1-1", "9.1", 1},
		{"non-ascii is a separator", "1.0é1", "1.0.1", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := rpmvercmp(tc.a, tc.b); got != tc.want {
				t.Fatalf("rpmvercmp(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := rpmvercmp(tc.b, tc.a); got != -tc.want {
				t.Fatalf("rpmvercmp(%q, %q) = %d, want %d (antisymmetry)", tc.b, tc.a, got, -tc.want)
			}
		})
	}
}

func TestCompareEVR(t *testing.T) {
	cases := []struct {
		name      string
		installed evr
		wanted    string
		want      int
	}{
		{"same version-release", evr{"0", "2.0", "1.el9"}, "2.0-1.el9", 0},
		{"no epoch wanted ignores installed epoch", evr{"2", "2.0", "1"}, "2.0-1", 0},
		{"epoch wanted compares first", evr{"2", "1.0", "1"}, "1:3.0-1", 1},
		{"explicit zero epoch equals unset", evr{"", "1.0", "1"}, "0:1.0-1", 0},
		{"epoch wanted newer", evr{"0", "9.0", "1"}, "1:1.0-1", -1},
		{"version without release is exact", evr{"0", "9.1", "1"}, "9.1", 1},
		{"release numeric", evr{"0", "1.0", "10.el9"}, "1.0-9.el9", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := compareEVR(tc.installed, parseEVR(tc.wanted)); got != tc.want {
				t.Fatalf("compareEVR(%+v, %q) = %d, want %d", tc.installed, tc.wanted, got, tc.want)
			}
		})
	}
}
