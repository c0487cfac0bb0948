package data

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"

	"github.com/ccm-dev/ccm/runtime/manifest"
)

// validator is one function offered to @validate expressions under both
// of its names (CCM offers camelCase and snake_case).
type validator struct {
	camel, snake string
	fn           func(params ...any) (any, error)
	sig          any // typed signature for expr's checker
}

// validatorOptions returns the expr options declaring every validator.
// Each call builds new values so that nothing is shared between checks.
func validatorOptions() []expr.Option {
	one := func(f func(string) bool) func(params ...any) (any, error) {
		return func(params ...any) (any, error) { return f(params[0].(string)), nil }
	}
	unary := new(func(string) bool)
	vs := []validator{
		{"isIP", "is_ip", one(IsIP), unary},
		{"isIPv4", "is_ipv4", one(IsIPv4), unary},
		{"isIPv6", "is_ipv6", one(IsIPv6), unary},
		{"isInt", "is_int", one(IsInt), unary},
		{"isFloat", "is_float", one(IsFloat), unary},
		{"isDuration", "is_duration", one(IsDuration), unary},
		{"isShellSafe", "is_shellsafe", one(IsShellSafe), unary},
		{"isHostname", "is_hostname", one(IsHostname), unary},
		{"isFQDN", "is_fqdn", one(IsFQDN), unary},
		{"isRegex", "is_regex", func(params ...any) (any, error) {
			return IsRegex(params[0].(string), params[1].(string))
		}, new(func(string, string) bool)},
	}
	opts := make([]expr.Option, 0, 2*len(vs))
	for _, v := range vs {
		opts = append(opts, expr.Function(v.camel, v.fn, v.sig), expr.Function(v.snake, v.fn, v.sig))
	}
	return opts
}

// IsIP reports whether s is an IPv4 or IPv6 address (an IPv6 zone such as
// "fe80::1%eth0" is accepted; IPv4 with leading zeros is not, since tools
// disagree on whether "010" is octal).
func IsIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// IsIPv4 reports whether s is a dotted-quad IPv4 address.
func IsIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// IsIPv6 reports whether s is written as an IPv6 address, IPv4-mapped
// forms ("::ffff:1.2.3.4") included.
func IsIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

// IsInt reports whether s is a base-10 integer that fits in 64 bits, with
// an optional sign and nothing else (no spaces, no '_', no 0x).
func IsInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// IsFloat reports whether s is a finite decimal number ("1", "-2.5",
// "1e3"). NaN, Inf, hexadecimal and '_' forms are refused: they parse in
// Go but not in most tools the value is handed to.
func IsFloat(s string) bool {
	if strings.ContainsAny(s, "xX_") {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// IsDuration reports whether s is a duration as manifests accept it: Go
// syntax plus d and w suffixes ("90s", "1d12h", "2w").
func IsDuration(s string) bool {
	_, err := manifest.ParseDuration(s)
	return err == nil
}

// IsRegex reports whether s matches the regular expression re (Go RE2
// syntax, unanchored: write ^...$ to match the whole value). A bad
// expression is an error, not a false result, so that it is fixed rather
// than read as an invalid value.
func IsRegex(s, re string) (bool, error) {
	r, err := regexp.Compile(re)
	if err != nil {
		return false, fmt.Errorf("invalid regex %q: %w", re, err)
	}
	return r.MatchString(s), nil
}

// shellUnsafe are the bytes IsShellSafe refuses: those that let a value
// interpolated into a shell command run another command or touch files:
// command separators and pipes (; & |), substitution (` $), redirection
// (< >), subshells (( )), line breaks and NUL. CCM's set is the same
// except that it looks for "&&" only; a lone '&' backgrounds one command
// and runs the next, so ccm refuses it too.
//
// Spaces, quotes, globs (* ?) and braces are allowed: they change word
// splitting but cannot start a command; templates must still quote values.
const shellUnsafe = "`$;|&<>()\n\r\x00"

// IsShellSafe reports whether s holds none of the shell metacharacters in
// shellUnsafe.
func IsShellSafe(s string) bool {
	return !strings.ContainsAny(s, shellUnsafe)
}

// IsHostname reports whether s is a host name under RFC 1123: dot-separated
// labels of 1-63 letters, digits and '-', not starting or ending with '-',
// 253 bytes at most. A single label ("web01") is a host name; a trailing
// dot is not allowed (use IsFQDN for absolute names).
func IsHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if !isLabel(label) {
			return false
		}
	}
	return true
}

// IsFQDN reports whether s is a fully qualified domain name: a host name
// of at least two labels, optionally ending in '.', whose last label is
// not all digits (so that "10.0.0.1" is not one).
func IsFQDN(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if !IsHostname(s) {
		return false
	}
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return false
	}
	_, err := strconv.ParseUint(s[i+1:], 10, 64)
	return err != nil
}

func isLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
