package manifest

import (
	"fmt"
	"strings"
)

// Ref names a resource by type and name (or alias): "file#/etc/motd".
type Ref struct{ Type, Name string }

// ParseRef reads a "type#name" reference as used by require and subscribe.
// The type is what the schema allows (^[a-z]+) widened to every valid type
// key (digits and underscores after the first letter) so that third-party
// types can be referenced; the name is everything after the first '#' and
// must be a single line.
func ParseRef(s string) (Ref, error) {
	typ, name, ok := strings.Cut(s, "#")
	switch {
	case !ok:
		return Ref{}, fmt.Errorf("%w: reference %q has no '#'; write type#name such as file#/etc/motd", ErrInvalid, s)
	case !validType(typ):
		return Ref{}, fmt.Errorf("%w: reference %q: type %q must be lowercase letters, digits and '_' starting with a letter", ErrInvalid, s, typ)
	case name == "":
		return Ref{}, fmt.Errorf("%w: reference %q has an empty name; write type#name such as file#/etc/motd", ErrInvalid, s)
	case strings.ContainsAny(name, "\n\r"):
		return Ref{}, fmt.Errorf("%w: reference %q: name spans more than one line", ErrInvalid, s)
	}
	return Ref{Type: typ, Name: name}, nil
}

// validType reports whether s matches ^[a-z][a-z0-9_]*$.
func validType(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
