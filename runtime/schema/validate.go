package schema

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccm-dev/ccm/internal/suggest"
)

// Placeholder stands for a value that is not known yet (a deferred property
// whose template is expanded only when the resource runs). It satisfies any
// schema, and counts as present for required and additionalProperties.
type Placeholder struct{}

// Problem is one way a value fails its schema.
type Problem struct {
	// Path locates the value: a top-level property name, then ".key" for
	// an object member and "[i]" for a list item ("environment[2]").
	// Empty for the properties object itself.
	Path    string
	Message string
	// Unknown marks a property the schema does not allow; Message is then
	// the hint ("did you mean …") or empty.
	Unknown bool
}

// String renders the problem for a user: `property "mode": must be a
// string, got an integer`, or `unknown property "contnet"; did you mean
// "content"?` (the form ccm_validate uses too).
func (p Problem) String() string {
	switch {
	case p.Unknown && p.Message == "":
		return fmt.Sprintf("unknown property %q", p.Path)
	case p.Unknown:
		return fmt.Sprintf("unknown property %q; %s", p.Path, p.Message)
	case p.Path == "":
		return p.Message
	}
	return fmt.Sprintf("property %q: %s", p.Path, p.Message)
}

// Validate checks v (usually a resource's properties, a map[string]any of
// decoded YAML values) and returns every problem found, ordered by path. A
// nil Schema accepts everything.
func (s *Schema) Validate(v any) []Problem {
	if s == nil || s.root == nil {
		return nil
	}
	var out []Problem
	s.root.check(v, "", &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Strings is Validate with each problem as a message.
func (s *Schema) Strings(v any) []string {
	ps := s.Validate(v)
	if len(ps) == 0 {
		return nil
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

func (n *node) check(v any, path string, out *[]Problem) {
	if _, ok := v.(Placeholder); ok {
		return
	}
	add := func(format string, args ...any) {
		*out = append(*out, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if n.never {
		add("no value is allowed here")
		return
	}
	k := kindOf(v)
	if n.types != 0 && n.types&k == 0 {
		add("must be %s, got %s%s", typeList(n.types), article(k), n.explain())
		return // the other keywords would only repeat the mismatch
	}
	if n.enum != nil && !containsEqual(n.enum, v) {
		add("must be one of %s%s", enumText(n.enum), n.explain())
	}
	if n.hasConst && !equal(n.constVal, v) {
		add("must be %s", jsonText(n.constVal))
	}
	switch k {
	case kString:
		s := v.(string)
		if n.minLength >= 0 || n.maxLength >= 0 {
			l := utf8.RuneCountInString(s)
			if n.minLength >= 0 && l < n.minLength {
				add("must be at least %d characters long", n.minLength)
			}
			if n.maxLength >= 0 && l > n.maxLength {
				add("must be at most %d characters long", n.maxLength)
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(s) {
			add("must match the pattern %s%s", n.pattern, n.explain())
		}
	case kInteger, kNumber:
		f, _ := toFloat(v)
		if n.minimum != nil && f < *n.minimum {
			add("must be at least %s", fmtNum(*n.minimum))
		}
		if n.maximum != nil && f > *n.maximum {
			add("must be at most %s", fmtNum(*n.maximum))
		}
		if n.exclusiveMinimum != nil && f <= *n.exclusiveMinimum {
			add("must be greater than %s", fmtNum(*n.exclusiveMinimum))
		}
		if n.exclusiveMaximum != nil && f >= *n.exclusiveMaximum {
			add("must be less than %s", fmtNum(*n.exclusiveMaximum))
		}
	case kArray:
		items := asList(v)
		if n.minItems >= 0 && len(items) < n.minItems {
			add("must have at least %d item%s", n.minItems, plural(n.minItems))
		}
		if n.maxItems >= 0 && len(items) > n.maxItems {
			add("must have at most %d item%s", n.maxItems, plural(n.maxItems))
		}
		if n.items != nil {
			for i, e := range items {
				n.items.check(e, path+"["+strconv.Itoa(i)+"]", out)
			}
		}
	case kObject:
		n.checkObject(asMap(v), path, out)
	}
	for _, s := range n.allOf {
		s.check(v, path, out)
	}
	if n.anyOf != nil {
		if fails := branches(n.anyOf, v, path); len(fails) == len(n.anyOf) {
			*out = append(*out, explain(fails, v, path)...)
		}
	}
	if n.oneOf != nil {
		fails := branches(n.oneOf, v, path)
		switch passed := len(n.oneOf) - len(fails); {
		case passed == 0:
			*out = append(*out, explain(fails, v, path)...)
		case passed > 1:
			add("matches %d of the alternatives, but must match exactly one", passed)
		}
	}
}

func (n *node) checkObject(m map[string]any, path string, out *[]Problem) {
	join := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	for _, r := range n.required {
		if _, ok := m[r]; !ok {
			*out = append(*out, Problem{Path: join(r), Message: "is required"})
		}
	}
	if n.properties == nil && n.additional == nil {
		return
	}
	// Map order is random; Validate sorts the problems by path.
	for k, v := range m {
		if s, ok := n.properties[k]; ok {
			s.check(v, join(k), out)
			continue
		}
		if n.additional == nil {
			continue
		}
		if n.additional.never {
			*out = append(*out, Problem{Path: join(k), Message: n.unknown(k), Unknown: true})
			continue
		}
		n.additional.check(v, join(k), out)
	}
}

// unknown is the hint for a property the schema does not allow: the
// closest known name when one is one or two edits away, else the list.
func (n *node) unknown(k string) string {
	if len(n.names) == 0 {
		return "no properties are allowed here"
	}
	if best := suggest.Closest(k, n.names); best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return "known: " + strings.Join(n.names, ", ")
}

// explain is the schema's description as a hint after a failure, or "".
func (n *node) explain() string {
	if n.hint == "" {
		return ""
	}
	return " (" + n.hint + ")"
}

// failure is the problems of one alternative of anyOf or oneOf.
type failure struct {
	problems []Problem
	types    kind // the alternative's types when v has none of them, else 0
}

// branches validates v against each alternative and returns the failing
// ones.
func branches(alts []*node, v any, path string) []failure {
	var fails []failure
	for _, a := range alts {
		var ps []Problem
		a.check(v, path, &ps)
		if len(ps) == 0 {
			continue
		}
		f := failure{problems: ps}
		if a.types != 0 && a.types&kindOf(v) == 0 {
			f.types = a.types
		}
		fails = append(fails, f)
	}
	return fails
}

// explain reports why no alternative matched. When v has the type of some
// alternatives, the problems of the closest of those (fewest problems) are
// what the author needs; when it has the type of none, one line lists the
// types that would do.
func explain(fails []failure, v any, path string) []Problem {
	var best []Problem
	var types kind
	for _, f := range fails {
		if f.types != 0 {
			types |= f.types
			continue
		}
		if best == nil || len(f.problems) < len(best) {
			best = f.problems
		}
	}
	if best != nil {
		return best
	}
	return []Problem{{Path: path, Message: fmt.Sprintf("must be %s, got %s", typeList(types), article(kindOf(v)))}}
}

// kindOf classifies a decoded value. Values of no JSON type count as
// objects when they are maps, arrays when slices, else as null.
func kindOf(v any) kind {
	switch t := v.(type) {
	case nil:
		return kNull
	case bool:
		return kBoolean
	case string:
		return kString
	case []any, []string:
		return kArray
	case map[string]any:
		return kObject
	case float64:
		if t == math.Trunc(t) && !math.IsInf(t, 0) {
			return kInteger
		}
		return kNumber
	case float32:
		return kindOf(float64(t))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return kInteger
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Slice, reflect.Array:
		return kArray
	case reflect.Map:
		return kObject
	}
	return 0
}

func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case float32:
		return float64(t), true
	case int:
		return float64(t), true
	case int8:
		return float64(t), true
	case int16:
		return float64(t), true
	case int32:
		return float64(t), true
	case int64:
		return float64(t), true
	case uint:
		return float64(t), true
	case uint8:
		return float64(t), true
	case uint16:
		return float64(t), true
	case uint32:
		return float64(t), true
	case uint64:
		return float64(t), true
	}
	return 0, false
}

func asList(v any) []any {
	switch t := v.(type) {
	case []any:
		return t
	case []string:
		out := make([]any, len(t))
		for i, s := range t {
			out[i] = s
		}
		return out
	}
	rv := reflect.ValueOf(v)
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out
}

func asMap(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	rv := reflect.ValueOf(v)
	out := make(map[string]any, rv.Len())
	it := rv.MapRange()
	for it.Next() {
		out[fmt.Sprint(it.Key().Interface())] = it.Value().Interface()
	}
	return out
}

// equal compares decoded values the way JSON does: numbers by value,
// whatever their Go type.
func equal(a, b any) bool {
	ka, kb := kindOf(a), kindOf(b)
	num := kInteger | kNumber
	if ka&num != 0 && kb&num != 0 {
		fa, _ := toFloat(a)
		fb, _ := toFloat(b)
		return fa == fb
	}
	if ka != kb {
		return false
	}
	switch ka {
	case kNull:
		return true
	case kBoolean:
		return a.(bool) == b.(bool)
	case kString:
		return a.(string) == b.(string)
	case kArray:
		la, lb := asList(a), asList(b)
		if len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !equal(la[i], lb[i]) {
				return false
			}
		}
		return true
	case kObject:
		ma, mb := asMap(a), asMap(b)
		if len(ma) != len(mb) {
			return false
		}
		for k, va := range ma {
			vb, ok := mb[k]
			if !ok || !equal(va, vb) {
				return false
			}
		}
		return true
	}
	return false
}

func containsEqual(list []any, v any) bool {
	for _, e := range list {
		if equal(e, v) {
			return true
		}
	}
	return false
}

// typeList names a type set for a message: "a string", "a string or a list".
func typeList(k kind) string {
	var names []string
	for _, c := range []kind{kString, kInteger | kNumber, kInteger, kBoolean, kArray, kObject, kNull} {
		if k&c == c {
			names = append(names, article(c))
			k &^= c
		}
	}
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// article names one kind as YAML authors know it.
func article(k kind) string {
	switch k {
	case kNull:
		return "null"
	case kBoolean:
		return "a boolean"
	case kInteger:
		return "an integer"
	case kNumber, kInteger | kNumber:
		return "a number"
	case kString:
		return "a string"
	case kArray:
		return "a list"
	case kObject:
		return "a map"
	}
	return "a value"
}

func enumText(list []any) string {
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = jsonText(e)
	}
	return strings.Join(parts, ", ")
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
