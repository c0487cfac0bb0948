package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// terminalSafe escapes what a terminal would act on in text that plugins,
// manifests or their files wrote (log lines, messages, errors): C0 and C1
// control characters other than newline and tab, DEL, Unicode bidi
// controls and invalid UTF-8 become \xNN or \uNNNN, so a plugin cannot
// clear the screen, move the cursor, set the window title, hide text or
// fake ccm's own lines with an escape sequence.
func terminalSafe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n <= 1) || unsafeRune(r) {
			return true
		}
		i += n
	}
	return false
}

func unsafeRune(r rune) bool {
	switch {
	case r == '\n', r == '\t':
		return false
	case r < 0x20, r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f:
		return true
	}
	return false
}
