package main

import (
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	cases := []struct {
		in      string
		want    uint32
		wantErr string
	}{
		{"644", 0o644, ""},
		{"0644", 0o644, ""},
		{"600", 0o600, ""},
		{"0o755", 0o755, ""},
		{"0O0700", 0o700, ""},
		{"0777", 0o777, ""},
		{"000", 0, ""},
		{"1777", 0, "above 0777"},
		{"4755", 0, "above 0777"},
		{"0o1777", 0, "above 0777"},
		{"64", 0, "3 or 4 octal digits"},
		{"06444", 0, "3 or 4 octal digits"},
		{"0x644", 0, "3 or 4 octal digits"},
		{"u+rw", 0, "3 or 4 octal digits"},
		{"-644", 0, "3 or 4 octal digits"},
		{"", 0, "3 or 4 octal digits"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseMode(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %o, %v; want %o", got, err, tc.want)
			}
		})
	}
}

func TestDirMode(t *testing.T) {
	cases := []struct{ in, want uint32 }{
		{0o644, 0o755},
		{0o600, 0o700},
		{0o640, 0o750},
		{0o200, 0o300},
		{0o755, 0o755},
		{0o000, 0o000},
		{0o711, 0o711},
		{0o404, 0o505},
	}
	for _, tc := range cases {
		t.Run(formatMode(tc.in), func(t *testing.T) {
			if got := dirMode(tc.in); got != tc.want {
				t.Fatalf("dirMode(%04o) = %04o, want %04o", tc.in, got, tc.want)
			}
		})
	}
}
