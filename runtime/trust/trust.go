// Package trust holds the pure logic of capability grants and execution
// modes: what a scope allows, and how a child scope narrows it. It touches no
// OS state; resolving symlinks before matching is the host's job (package
// host), which calls into this package from its single check function.
package trust

import (
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Mode is what a plugin call may do.
type Mode int

const (
	ModeApply       Mode = iota // mutating host calls allowed (subject to grants)
	ModeNoop                    // read-only: decide and report, never mutate
	ModeHealthCheck             // read-only: only health checks run
	ModeStatus                  // read-only: ccm_status and ccm_validate
)

// ReadOnly reports whether mutating host calls are refused in this mode.
func (m Mode) ReadOnly() bool { return m != ModeApply }

// Request returns req with the mode flags a plugin reads (Request.Noop,
// Request.HealthCheckOnly) set from m. The mode is the one carrier of the
// fact (Caller.Mode); the host derives the flags with this when it calls
// ccm_apply, so the engine never sets them. Status, read-only, asks for noop.
func (m Mode) Request(req abi.Request) abi.Request {
	req.Noop = m == ModeNoop || m == ModeStatus
	req.HealthCheckOnly = m == ModeHealthCheck
	return req
}

func (m Mode) String() string {
	switch m {
	case ModeApply:
		return "apply"
	case ModeNoop:
		return "noop"
	case ModeHealthCheck:
		return "health-check-only"
	case ModeStatus:
		return "status"
	}
	return "unknown"
}

// Grant has the shape of a plugin's requested capabilities.
type Grant = abi.Capabilities

// All is the grant of the root scope when the operator gives none.
func All() Grant {
	return Grant{
		FSRead:  []string{"/**"},
		FSWrite: []string{"/**"},
		Exec:    []string{"/**"},
		Net:     []string{"*"},
		Users:   true,
		Setid:   true,
		// Every variable outside the code-injection class (env.go): those
		// need a grant that names them, never a default.
		Env: []string{"*"},
	}
}

// Chain is a scope's grant: the grants of the scope and of every enclosing
// scope. A request is allowed only if every grant in the chain allows it, so
// narrowing is appending and a child can never widen what a parent granted.
// The zero Chain allows everything (no grant was ever given).
type Chain []Grant

// Narrow returns a new chain with g added; c is not modified.
func (c Chain) Narrow(g Grant) Chain {
	out := make(Chain, len(c), len(c)+1)
	copy(out, c)
	return append(out, g)
}

// AllowsSetid reports whether every grant in the chain has setid: true,
// which setting a setuid or setgid bit needs. The zero chain allows it.
func (c Chain) AllowsSetid() bool {
	for _, g := range c {
		if !g.Setid {
			return false
		}
	}
	return true
}

// Confined reports whether some grant in the chain narrows the filesystem:
// one whose fs_read or fs_write does not hold "/**". Only then is there an
// outside for a hard link inside the grant to lead to.
func (c Chain) Confined() bool {
	for _, g := range c {
		if !slices.Contains(g.FSRead, "/**") || !slices.Contains(g.FSWrite, "/**") {
			return true
		}
	}
	return false
}

// Kind names a capability family.
type Kind string

const (
	FSRead  Kind = "fs_read"
	FSWrite Kind = "fs_write"
	Exec    Kind = "exec"
	Net     Kind = "net"
	Users   Kind = "users"
)

// Allows reports whether every grant in the chain allows target for kind.
// target is an absolute, cleaned path (fs, exec) or host[:port] (net); it is
// ignored for Users.
func (c Chain) Allows(kind Kind, target string) bool {
	for _, g := range c {
		if !GrantAllows(g, kind, target) {
			return false
		}
	}
	return true
}

// GrantAllows reports whether one grant allows target for kind.
func GrantAllows(g Grant, kind Kind, target string) bool {
	switch kind {
	case FSRead:
		return matchPath(g.FSRead, target)
	case FSWrite:
		return matchPath(g.FSWrite, target)
	case Exec:
		return matchPath(g.Exec, target)
	case Net:
		return matchNet(g.Net, target)
	case Users:
		return g.Users
	}
	return false
}

// matchPath matches an absolute, clean path against absolute doublestar
// globs. Relative or unclean targets never match: the host must resolve them
// first, and a target with ".." left in it is refused outright.
func matchPath(globs []string, target string) bool {
	if !path.IsAbs(target) || path.Clean(target) != target {
		return false
	}
	for _, g := range globs {
		if !path.IsAbs(g) || !validGlob(g) {
			continue
		}
		if ok, err := doublestar.Match(g, target); err == nil && ok {
			return true
		}
		// "/dir/**" also covers "/dir" itself.
		if strings.HasSuffix(g, "/**") && strings.TrimSuffix(g, "/**") == target {
			return true
		}
	}
	return false
}

// validGlob reports whether a glob can be matched byte for byte. doublestar
// decodes both sides as UTF-8, so every byte that is not valid UTF-8 reads as
// U+FFFD: a glob holding one, or U+FFFD itself, would match a path holding a
// different invalid byte (a grant of "/x/\xaa" matched "/x/\x80"). Such a
// glob matches nothing (DecodeGrant refuses it); an invalid byte of a target
// can then be matched only by a wildcard or a character class, never by a
// literal.
func validGlob(g string) bool {
	return utf8.ValidString(g) && !strings.ContainsRune(g, utf8.RuneError)
}

// Caller is who a plugin call (and every host call it makes) acts for. The
// host carries it in the call's context, and runs the call in a plugin
// instance serving only callers with the same Grants and Limits.
type Caller struct {
	Resource string // "type#name", for messages and logs
	// Plugin is the id of the plugin serving the resource (hostapi.Plugins);
	// "" means the resource's type name (a built-in or operator plugin).
	Plugin   string
	Manifest string // the declaring manifest file, for messages
	Grants   Chain  // the scope's grant chain
	// Mode is what the call may do, and the one place the run's mode
	// lives: the host derives the request's noop and health-check-only
	// flags from it (Mode.Request).
	Mode Mode
	// Lookup answers ccm_lookup (GJSON path into facts/data/environ).
	Lookup func(path string) (any, bool)
	// Log receives ccm_log lines; nil discards them.
	Log func(level, message string)
	// Limits are the scope's lowered limits; the host applies, per field,
	// the lower of its own and these. The zero value lowers nothing.
	Limits Limits
}
