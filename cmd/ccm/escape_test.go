package main

import "testing"

func TestTerminalSafe(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "file#/etc/motd changed", "file#/etc/motd changed"},
		{"newline and tab kept", "a\n\tb", "a\n\tb"},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"window title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"carriage return", "ok\rFAKE", `ok\x0dFAKE`},
		{"C1 CSI", "a\u009b31mb", `a\u009b31mb`},
		{"bidi override", "a\u202eb", `a\u202eb`},
		{"invalid utf-8", "a\xffb", `a\xffb`},
		{"unicode kept", "größe ✓", "größe ✓"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := terminalSafe(tt.in); got != tt.want {
				t.Errorf("terminalSafe(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
