package main

import "strings"

// evr is an RPM epoch:version-release. An empty epoch means "not given".
type evr struct {
	epoch, version, release string
}

// String is VERSION-RELEASE, the form reported as the package version.
func (e evr) String() string {
	if e.release == "" {
		return e.version
	}
	return e.version + "-" + e.release
}

// parseEVR cuts [epoch:]version[-release]; the release starts after the last
// hyphen, as rpm splits a NEVR.
func parseEVR(v string) evr {
	var e evr
	if ep, rest, ok := strings.Cut(v, ":"); ok {
		e.epoch, v = ep, rest
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		e.version, e.release = v[:i], v[i+1:]
	} else {
		e.version = v
	}
	return e
}

// compareEVR orders an installed package against a wanted one. Epochs
// compare first (missing = 0) only when the wanted version names one: a
// user who writes "2.0-1" means that version-release whatever its epoch,
// as dnf matches NAME-VERSION. Then version-release with rpmvercmp.
func compareEVR(installed, wanted evr) int {
	if wanted.epoch != "" {
		ie := installed.epoch
		if ie == "" {
			ie = "0"
		}
		if c := compareDigits(ie, wanted.epoch); c != 0 {
			return c
		}
	}
	return rpmvercmp(installed.String(), wanted.String())
}

// rpmvercmp is rpm's rpmio/rpmvercmp.c: alphanumeric segments separated by
// anything else; '~' sorts before everything (even the end), '^' after the
// end but before any further segment; a numeric segment beats an alphabetic
// one; numbers compare without leading zeros, letters byte-wise.
func rpmvercmp(a, b string) int {
	if a == b {
		return 0
	}
	for a != "" || b != "" {
		a = strings.TrimLeftFunc(a, isRPMSeparator)
		b = strings.TrimLeftFunc(b, isRPMSeparator)

		if ta, tb := strings.HasPrefix(a, "~"), strings.HasPrefix(b, "~"); ta || tb {
			if !ta {
				return 1
			}
			if !tb {
				return -1
			}
			a, b = a[1:], b[1:]
			continue
		}
		if ca, cb := strings.HasPrefix(a, "^"), strings.HasPrefix(b, "^"); ca || cb {
			switch {
			case a == "":
				return -1
			case b == "":
				return 1
			case !ca:
				return 1
			case !cb:
				return -1
			}
			a, b = a[1:], b[1:]
			continue
		}
		if a == "" || b == "" {
			break
		}

		numeric := isDigit(a[0])
		segA, restA := segment(a, numeric)
		segB, restB := segment(b, numeric)
		if segB == "" {
			// Different kinds: the numeric one is newer.
			if numeric {
				return 1
			}
			return -1
		}
		var c int
		if numeric {
			c = compareDigits(segA, segB)
		} else {
			c = strings.Compare(segA, segB)
		}
		if c != 0 {
			return c
		}
		a, b = restA, restB
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}

// segment takes the leading run of digits (numeric) or letters.
func segment(s string, numeric bool) (seg, rest string) {
	i := 0
	for i < len(s) && (numeric && isDigit(s[i]) || !numeric && isAlpha(s[i])) {
		i++
	}
	return s[:i], s[i:]
}

func isRPMSeparator(r rune) bool {
	// Non-ASCII runes are separators too, as C's isalnum says in the C locale.
	alnum := r < 128 && (isDigit(byte(r)) || isAlpha(byte(r)))
	return !alnum && r != '~' && r != '^'
}
