package props

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ccm-dev/ccm/internal/suggest"
	"github.com/ccm-dev/ccm/sdk/flat"
)

// Reader reads properties and collects problems. Every key a getter asks
// for counts as known, so Unknown can name the ones nobody read.
type Reader struct {
	props *flat.Props
	// known is a short list, searched linearly: a type reads about ten
	// keys, and in the wasm guest a map of them (allocated, hashed and
	// grown per resource) cost more than every comparison here. It starts
	// in knownBuf, which saves an allocation per resource.
	known    []string
	knownBuf [16]string
	errs     []string
}

// New returns a Reader over props; a nil map reads as empty.
func New(props map[string]any) *Reader {
	return NewFlat(flat.FromMap(props))
}

// NewFlat returns a Reader over flat properties (sdk.FlatPreparer); nil
// reads as empty. props must stay unchanged while the Reader is used.
func NewFlat(props *flat.Props) *Reader {
	r := &Reader{props: props}
	r.known = r.knownBuf[:0]
	return r
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

// Lookup returns key's value and whether key is set (null included),
// without marking key as known.
func (r *Reader) Lookup(key string) (flat.Value, bool) { return r.props.Get(key) }

// Has reports whether key is set to a non-null value.
func (r *Reader) Has(key string) bool {
	_, ok := r.value(key)
	return ok
}

// value marks key as known and returns its value when set and not null.
func (r *Reader) value(key string) (flat.Value, bool) {
	r.markKnown(key)
	v, ok := r.props.Get(key)
	return v, ok && !v.IsNull()
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
	v, set := r.value(key)
	if !set {
		return "", false
	}
	if v.Kind() != flat.KindString {
		r.Errorf("property %q must be a string, got %s", key, kind(v))
		return "", false
	}
	return v.Str(), true
}

// Text reads a string, also accepting a number or a boolean in their plain
// text form, because a template that is one expression yields its native
// type (content: "${ Data.port }" gives 8080, not "8080").
func (r *Reader) Text(key string) (s string, ok bool) {
	v, set := r.value(key)
	if !set {
		return "", false
	}
	switch v.Kind() {
	case flat.KindString:
		return v.Str(), true
	case flat.KindBool:
		return strconv.FormatBool(v.Bool()), true
	case flat.KindNumber:
		switch n := v.Any().(type) {
		case float64:
			return strconv.FormatFloat(n, 'f', -1, 64), true
		case int:
			return strconv.Itoa(n), true
		case int64:
			return strconv.FormatInt(n, 10), true
		}
	}
	r.Errorf("property %q must be a string, got %s", key, kind(v))
	return "", false
}

// Bool reads a boolean; unset or null reads as false with ok false.
func (r *Reader) Bool(key string) (b bool, ok bool) {
	v, set := r.value(key)
	if !set {
		return false, false
	}
	if v.Kind() != flat.KindBool {
		r.Errorf("property %q must be a boolean, got %s", key, kind(v))
		return false, false
	}
	return v.Bool(), true
}

// StringList reads a list of strings.
func (r *Reader) StringList(key string) ([]string, bool) {
	val, set := r.value(key)
	if !set {
		return nil, false
	}
	items, ok := asList(val.Any())
	if !ok {
		r.Errorf("property %q must be a list of strings, got %s", key, kind(val))
		return nil, false
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			r.Errorf("property %q item %d must be a string, got %s", key, i, kindOf(it))
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// IntList reads a list of integers; a single integer reads as a list of one.
func (r *Reader) IntList(key string) ([]int, bool) {
	val, set := r.value(key)
	if !set {
		return nil, false
	}
	v := val.Any()
	if n, ok := asInt(v); ok {
		return []int{n}, true
	}
	items, ok := asList(v)
	if !ok {
		r.Errorf("property %q must be a list of integers, got %s", key, kindOf(v))
		return nil, false
	}
	out := make([]int, 0, len(items))
	for i, it := range items {
		n, ok := asInt(it)
		if !ok {
			r.Errorf("property %q item %d must be an integer, got %s", key, i, kindOf(it))
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
	for i := range r.props.Len() {
		if k := r.props.At(i).Key; !r.isKnown(k) {
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

// kind is kindOf(v.Any()), without boxing the scalars.
func kind(v flat.Value) string {
	switch v.Kind() {
	case flat.KindString:
		return "a string"
	case flat.KindBool:
		return "a boolean"
	case flat.KindNumber:
		return "a number"
	case flat.KindNull:
		return "null"
	}
	return kindOf(v.Any())
}

func kindOf(v any) string {
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
