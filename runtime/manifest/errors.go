package manifest

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels wrapped by *Error so callers can tell failure kinds apart with
// errors.Is without matching text.
var (
	// ErrSyntax means the document is not valid YAML/JSON.
	ErrSyntax = errors.New("invalid YAML")
	// ErrUnknownKey means a key that this position does not allow.
	ErrUnknownKey = errors.New("unknown key")
	// ErrDuplicate means a repeated map key or a repeated type#name.
	ErrDuplicate = errors.New("duplicate")
	// ErrNoResources means the manifest declares no resource.
	ErrNoResources = errors.New("no resources")
	// ErrInvalid means a value of the wrong kind or out of range.
	ErrInvalid = errors.New("invalid value")
)

// Error locates a manifest problem: file, line and the resource or key
// path it concerns.
type Error struct {
	File    string // as given to Parse
	Line    int    // 1-based; 0 when the problem has no single line
	Column  int    // 1-based; 0 when unknown (set for YAML syntax errors)
	Subject string // "file#/etc/motd" or a key path such as "ccm.fail_on_error"; may be empty
	Err     error
	// Excerpt is the source around Line with a caret under Column, for
	// syntax errors; Error prints it on the lines after the message.
	Excerpt string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": ")
	if e.Subject != "" {
		b.WriteString(e.Subject)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	if e.Excerpt != "" {
		b.WriteString("\n")
		b.WriteString(e.Excerpt)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// valueError is a problem found while decoding a YAML node. It carries the
// key path below the node being decoded; the path is collected while the
// error unwinds (innermost segment first) so that the happy path allocates
// nothing for it and deep documents do not rebuild it at every level.
type valueError struct {
	line int
	path string   // innermost part of the path, set where the error is made
	segs []string // enclosing segments, innermost first
	err  error
}

func (e *valueError) Error() string {
	if p := e.fullPath(); p != "" {
		return p + ": " + e.err.Error()
	}
	return e.err.Error()
}

func (e *valueError) Unwrap() error { return e.err }

// fullPath joins the segments into "a.b[2].c".
func (e *valueError) fullPath() string {
	var b strings.Builder
	for i := len(e.segs) - 1; i >= 0; i-- {
		seg := e.segs[i]
		if b.Len() > 0 && !strings.HasPrefix(seg, "[") {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	if e.path != "" {
		if b.Len() > 0 && !strings.HasPrefix(e.path, "[") {
			b.WriteByte('.')
		}
		b.WriteString(e.path)
	}
	return b.String()
}

// under records that err happened below a map key or list index segment.
func under(err error, segment string) error {
	var ve *valueError
	if errors.As(err, &ve) {
		ve.segs = append(ve.segs, segment)
	}
	return err
}

func index(i int) string { return "[" + strconv.Itoa(i) + "]" }

// atKey turns a decoding error into an *Error whose subject is the key
// path: prefix joined with the path inside the decoded value.
func atKey(file string, err error, prefix string, line int) error {
	ve, l := unwrapValue(err, line)
	if ve == nil {
		return &Error{File: file, Line: l, Subject: prefix, Err: err}
	}
	s, path := prefix, ve.fullPath()
	switch {
	case path == "":
	case s == "":
		s = path
	case strings.HasPrefix(path, "["):
		s += path
	default:
		s += "." + path
	}
	return &Error{File: file, Line: l, Subject: s, Err: ve.err}
}

// atResource turns a decoding error into an *Error about one resource: the
// subject is its type#name and the key path inside it leads the message.
func atResource(file string, err error, subject string, line int) error {
	ve, l := unwrapValue(err, line)
	if ve == nil {
		return &Error{File: file, Line: l, Subject: subject, Err: err}
	}
	path := ve.fullPath()
	if path == "" {
		return &Error{File: file, Line: l, Subject: subject, Err: ve.err}
	}
	return &Error{File: file, Line: l, Subject: subject, Err: &keyError{path: path, err: ve.err}}
}

func unwrapValue(err error, line int) (*valueError, int) {
	var ve *valueError
	if !errors.As(err, &ve) {
		return nil, line
	}
	if ve.line > 0 {
		line = ve.line
	}
	return ve, line
}

// keyError names the property a resource error is about, keeping the
// sentinel reachable through Unwrap.
type keyError struct {
	path string
	err  error
}

func (e *keyError) Error() string { return e.path + ": " + e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }
