package main

import (
	"fmt"
	"strconv"
	"strings"
)

// parseMode reads "644", "0644", "0o644" or "0O0644" as permission bits.
// Setuid, setgid and sticky are refused: CCM caps modes at 0777.
func parseMode(s string) (uint32, error) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
	n, err := strconv.ParseUint(digits, 8, 32)
	if err != nil || len(digits) < 3 || len(digits) > 4 {
		return 0, fmt.Errorf("mode %q must be 3 or 4 octal digits, such as \"0644\"", s)
	}
	if n > 0o777 {
		return 0, fmt.Errorf("mode %q is above 0777; setuid, setgid and sticky bits are not supported", s)
	}
	return uint32(n), nil
}

// dirMode gives every triad with a read or write bit the execute bit too, so
// "0644" on a directory means 0755: a directory without x cannot be entered.
func dirMode(m uint32) uint32 {
	for shift := 0; shift <= 6; shift += 3 {
		if m>>shift&0o6 != 0 {
			m |= 1 << shift
		}
	}
	return m
}

func formatMode(m uint32) string { return fmt.Sprintf("%04o", m) }
