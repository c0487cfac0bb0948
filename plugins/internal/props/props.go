package props

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ccm-dev/ccm/internal/suggest"
)

// Reader reads properties and collects problems. Every key a getter asks
// for counts as known, so Unknown can name the ones nobody read.
type Reader struct {
	props map[string]any
	// known is a short list, searched linearly: a type reads about ten
	// keys, and in the wasm guest a map of them (allocated, hashed and
	// grown per resource) cost more than every comparison here.
	known []string
	errs  []string
}

// New returns a Reader over props; a nil map reads as empty.
func New(props map[string]any) *Reader {
	return &Reader{props: props, known: make([]string, 0, 16)}
}

func (r *Reader) isKnown(key string) bool {
	for _, k := range r.known {
		if k == key {
			return true
		}
	}
	return false
}

func (r *Reader) markKnown(key string) {
	if !r.isKnown(key) {
		r.known = append(r.known, key)
	}
}

// Known marks keys as accepted without reading them (for example "name",
// which a type takes from the request instead).
func (r *Reader) Known(keys ...string) {
	for _, k := range keys {
		r.markKnown(k)
	}
}

// Has reports whether key is set to a non-null value.
func (r *Reader) Has(key string) bool {
	r.markKnown(key)
	v, ok := r.props[key]
	return ok && v != nil
}

// Errorf records a problem.
func (r *Reader) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// Errors returns every problem recorded so far, in the order found.
func (r *Reader) Errors() []string { return r.errs }

// String reads a string. ok is false when the key is unset or null, or when
// it holds another type (recorded as a problem).
func (r *Reader) String(key string) (s string, ok bool) {
	if !r.Has(key) {
		return "", false
	}
	s, ok = r.props[key].(string)
	if !ok {
		r.Errorf("property %q must be a string, got %s", key, kind(r.props[key]))
	}
	return s, ok
}

// Text reads a string, also accepting a number or a boolean in their plain
// text form, because a template that is one expression yields its native
// type (content: "${ Data.port }" gives 8080, not "8080").
func (r *Reader) Text(key string) (s string, ok bool) {
	if !r.Has(key) {
		return "", false
	}
	switch v := r.props[key].(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	}
	r.Errorf("property %q must be a string, got %s", key, kind(r.props[key]))
	return "", false
}

// Bool reads a boolean; unset or null reads as false with ok false.
func (r *Reader) Bool(key string) (b bool, ok bool) {
	if !r.Has(key) {
		return false, false
	}
	b, ok = r.props[key].(bool)
	if !ok {
		r.Errorf("property %q must be a boolean, got %s", key, kind(r.props[key]))
	}
	return b, ok
}

// StringList reads a list of strings.
func (r *Reader) StringList(key string) ([]string, bool) {
	if !r.Has(key) {
		return nil, false
	}
	items, ok := asList(r.props[key])
	if !ok {
		r.Errorf("property %q must be a list of strings, got %s", key, kind(r.props[key]))
		return nil, false
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			r.Errorf("property %q item %d must be a string, got %s", key, i, kind(it))
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// IntList reads a list of integers; a single integer reads as a list of one.
func (r *Reader) IntList(key string) ([]int, bool) {
	if !r.Has(key) {
		return nil, false
	}
	v := r.props[key]
	if n, ok := asInt(v); ok {
		return []int{n}, true
	}
	items, ok := asList(v)
	if !ok {
		r.Errorf("property %q must be a list of integers, got %s", key, kind(v))
		return nil, false
	}
	out := make([]int, 0, len(items))
	for i, it := range items {
		n, ok := asInt(it)
		if !ok {
			r.Errorf("property %q item %d must be an integer, got %s", key, i, kind(it))
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// Unknown records one problem per key that no getter asked for, sorted by
// name, with a suggestion when a known key is one or two edits away
// (CCM silently dropped "contnet" and "refresh_only"; we name them).
func (r *Reader) Unknown() {
	var unknown []string
	for k := range r.props {
		if !r.isKnown(k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		if s := r.closest(k); s != "" {
			r.Errorf("unknown property %q; did you mean %q?", k, s)
			continue
		}
		r.Errorf("unknown property %q", k)
	}
}

func (r *Reader) closest(k string) string {
	known := slices.Clone(r.known)
	sort.Strings(known)
	return suggest.Closest(k, known)
}

// HasTemplate reports whether s still holds an unexpanded template
// expression. Deferred properties arrive unexpanded at validate time, so
// checks on their final form must wait for apply.
func HasTemplate(s string) bool {
	return strings.Contains(s, "{{") || strings.Contains(s, "${")
}

func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out, true
	case []int:
		out := make([]any, len(l))
		for i, n := range l {
			out[i] = n
		}
		return out, true
	}
	return nil, false
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == math.Trunc(n) && math.Abs(n) <= math.MaxInt32 {
			return int(n), true
		}
	}
	return 0, false
}

func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	case []any, []string, []int:
		return "a list"
	case map[string]any:
		return "a map"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
