package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"1s", time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"1d", 24 * time.Hour, ""},
		{"1.5d", 36 * time.Hour, ""},
		{"2w", 14 * 24 * time.Hour, ""},
		{"1w2d3h", (7+2)*24*time.Hour + 3*time.Hour, ""},
		{"10us", 10 * time.Microsecond, ""},
		{"10µs", 10 * time.Microsecond, ""},
		{"", 0, "empty duration"},
		{"10", 0, "each number needs a unit"},
		{"s", 0, "each number needs a unit"},
		{"-1s", 0, "each number needs a unit"},
		{"1x", 0, `unknown unit "x"`},
		{"1..2d", 0, "invalid syntax"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseDuration(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
