package main

import "strings"

// compareDebian orders two Debian version strings as dpkg does
// (deb-version(7)): epoch numerically, then upstream version, then revision,
// each compared with verrevcmp. It returns -1, 0 or 1. A missing epoch is 0
// and a missing revision is empty, so "9.1" sorts before "9.1-1".
func compareDebian(a, b string) int {
	ea, ua, ra := splitDebian(a)
	eb, ub, rb := splitDebian(b)
	if c := compareDigits(ea, eb); c != 0 {
		return c
	}
	if c := verrevcmp(ua, ub); c != 0 {
		return c
	}
	return verrevcmp(ra, rb)
}

// splitDebian cuts [epoch:]upstream[-revision]: the epoch ends at the first
// colon, the revision starts after the last hyphen.
func splitDebian(v string) (epoch, upstream, revision string) {
	epoch = "0"
	if e, rest, ok := strings.Cut(v, ":"); ok {
		epoch, v = e, rest
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

// verrevcmp is dpkg's lib/dpkg/version.c algorithm: alternate non-digit
// runs (compared char by char with order) and digit runs (numeric).
func verrevcmp(a, b string) int {
	for a != "" || b != "" {
		firstDiff := 0
		for (a != "" && !isDigit(a[0])) || (b != "" && !isDigit(b[0])) {
			ac, bc := debOrder(a), debOrder(b)
			if ac != bc {
				return sign(ac - bc)
			}
			a, b = a[1:], b[1:]
		}
		a = strings.TrimLeft(a, "0")
		b = strings.TrimLeft(b, "0")
		for a != "" && isDigit(a[0]) && b != "" && isDigit(b[0]) {
			if firstDiff == 0 {
				firstDiff = int(a[0]) - int(b[0])
			}
			a, b = a[1:], b[1:]
		}
		if a != "" && isDigit(a[0]) {
			return 1
		}
		if b != "" && isDigit(b[0]) {
			return -1
		}
		if firstDiff != 0 {
			return sign(firstDiff)
		}
	}
	return 0
}

// debOrder weighs the first character of s: end of string and digits 0,
// '~' below everything (even the end), letters by ASCII, and any other
// character after all letters.
func debOrder(s string) int {
	if s == "" {
		return 0
	}
	c := s[0]
	switch {
	case isDigit(c):
		return 0
	case isAlpha(c):
		return int(c)
	case c == '~':
		return -1
	default:
		return int(c) + 256
	}
}

// compareDigits compares two runs of decimal digits numerically, whatever
// their length (epochs may exceed int range in theory).
func compareDigits(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return sign(len(a) - len(b))
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
