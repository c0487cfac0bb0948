package suggest

import (
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	known := []string{"content", "owner", "group", "mode", "source"}
	tests := []struct {
		name, in, want string
	}{
		{"one transposition", "contnet", "content"},
		{"one missing letter", "ownr", "owner"},
		{"exact", "mode", "mode"},
		{"three edits is too far", "xyzde", ""},
		{"empty input", "", ""},
		{"long input is never close", strings.Repeat("content", 20), ""},
		{"first of equals wins", "moue", "mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Closest(tc.in, known); got != tc.want {
				t.Fatalf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2},
	}
	for _, tc := range tests {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
