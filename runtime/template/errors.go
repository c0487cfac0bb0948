package template

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels for errors callers may want to tell apart.
var (
	// ErrNotFound means lookup found nothing at the path and had no default.
	ErrNotFound = errors.New("not found")
	// ErrNotSupported means a CCM template feature this build lacks (NATS).
	ErrNotSupported = errors.New("not supported yet")
	// ErrNotBool means a control expression did not give a boolean.
	ErrNotBool = errors.New("not a boolean")
)

// pathError names where inside an expanded value a string failed. The
// path is collected while unwinding, innermost segment first.
type pathError struct {
	segs []string
	err  error
}

func (e *pathError) Error() string {
	var b strings.Builder
	for i := len(e.segs) - 1; i >= 0; i-- {
		seg := e.segs[i]
		if b.Len() > 0 && !strings.HasPrefix(seg, "[") {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String() + ": " + e.err.Error()
}

func (e *pathError) Unwrap() error { return e.err }

// at records that err happened under segment.
func at(err error, segment string) error {
	var pe *pathError
	if errors.As(err, &pe) {
		pe.segs = append(pe.segs, segment)
		return pe
	}
	return &pathError{segs: []string{segment}, err: err}
}

func index(i int) string { return "[" + strconv.Itoa(i) + "]" }
