package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// MaxDepth bounds how deeply subschemas may nest in one document, so a
// hostile plugin cannot exhaust the host's stack with its schema.
const MaxDepth = 32

// ErrInvalid is wrapped by every Compile error.
var ErrInvalid = errors.New("invalid properties schema")

// Schema is a compiled schema. The zero value and nil accept everything.
// A Schema is immutable and safe for concurrent use.
type Schema struct {
	root *node
}

// kind is a JSON type as a bit, so a type set is one integer.
type kind uint8

const (
	kNull kind = 1 << iota
	kBoolean
	kInteger // a number with no fractional part; "number" includes it
	kNumber  // a number with a fractional part
	kString
	kArray
	kObject
)

var kindNames = []struct {
	k    kind
	name string
}{
	{kNull, "null"}, {kBoolean, "boolean"}, {kInteger, "integer"}, {kNumber, "number"},
	{kString, "string"}, {kArray, "array"}, {kObject, "object"},
}

// node is one compiled (sub)schema.
type node struct {
	never bool   // the boolean schema false
	types kind   // 0 = any type
	hint  string // the description, shown after a type, enum or pattern failure

	properties map[string]*node
	names      []string // sorted keys of properties, for hints
	required   []string
	additional *node // nil = any additional property is fine

	enum     []any
	hasConst bool
	constVal any

	items              *node
	minItems, maxItems int // -1 = unset

	pattern              *regexp.Regexp
	minLength, maxLength int // -1 = unset

	minimum, maximum                   *float64
	exclusiveMinimum, exclusiveMaximum *float64

	anyOf, oneOf, allOf []*node
}

// annotations are keywords with no effect on validation.
var annotations = []string{
	"title", "description", "default", "examples", "format",
	"$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly",
}

var supported = []string{
	"type", "properties", "required", "additionalProperties", "enum", "const",
	"items", "minItems", "maxItems", "pattern", "minLength", "maxLength",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"anyOf", "oneOf", "allOf",
}

// Compile parses and checks a schema document. An empty document (or
// JSON null) yields a nil Schema, which accepts everything. Errors wrap
// ErrInvalid and name the keyword's location as a JSON pointer.
func Compile(doc []byte) (*Schema, error) {
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 || string(doc) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %v", ErrInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrInvalid)
	}
	root, err := compileNode(v, "", 0)
	if err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

func compileNode(v any, at string, depth int) (*node, error) {
	where := at
	if where == "" {
		where = "/"
	}
	if depth > MaxDepth {
		return nil, fmt.Errorf("%w: at %s: nested more than %d levels deep", ErrInvalid, where, MaxDepth)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: at %s: %s", ErrInvalid, where, fmt.Sprintf(format, args...))
	}
	switch t := v.(type) {
	case bool:
		return &node{never: !t, minItems: -1, maxItems: -1, minLength: -1, maxLength: -1}, nil
	case map[string]any:
		n := &node{minItems: -1, maxItems: -1, minLength: -1, maxLength: -1}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := n.keyword(k, t[k], at, depth); err != nil {
				return nil, err
			}
		}
		if n.minItems >= 0 && n.maxItems >= 0 && n.minItems > n.maxItems {
			return nil, bad("minItems %d is above maxItems %d", n.minItems, n.maxItems)
		}
		if n.minLength >= 0 && n.maxLength >= 0 && n.minLength > n.maxLength {
			return nil, bad("minLength %d is above maxLength %d", n.minLength, n.maxLength)
		}
		return n, nil
	}
	return nil, bad("a schema must be an object or a boolean, got %s", jsonKind(v))
}

// keyword compiles one keyword of an object schema into n.
func (n *node) keyword(k string, v any, at string, depth int) error {
	here := at + "/" + escapePointer(k)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: at %s: %s", ErrInvalid, here, fmt.Sprintf(format, args...))
	}
	sub := func(v any, suffix string) (*node, error) {
		return compileNode(v, here+suffix, depth+1)
	}
	subList := func() ([]*node, error) {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return nil, bad("must be a non-empty array of schemas")
		}
		out := make([]*node, len(list))
		for i, e := range list {
			s, err := sub(e, fmt.Sprintf("/%d", i))
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	var err error
	switch k {
	case "type":
		n.types, err = parseTypes(v)
		if err != nil {
			return bad("%v", err)
		}
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return bad("must be an object")
		}
		n.properties = make(map[string]*node, len(m))
		for name, s := range m {
			if n.properties[name], err = sub(s, "/"+escapePointer(name)); err != nil {
				return err
			}
			n.names = append(n.names, name)
		}
		sort.Strings(n.names)
	case "required":
		list, ok := v.([]any)
		if !ok {
			return bad("must be an array of strings")
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				return bad("must be an array of strings")
			}
			if slices.Contains(n.required, s) {
				return bad("lists %q twice", s)
			}
			n.required = append(n.required, s)
		}
	case "additionalProperties":
		if n.additional, err = sub(v, ""); err != nil {
			return err
		}
	case "enum":
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return bad("must be a non-empty array")
		}
		n.enum = make([]any, len(list))
		for i, e := range list {
			n.enum[i] = normalize(e)
		}
	case "const":
		n.hasConst, n.constVal = true, normalize(v)
	case "items":
		if _, isList := v.([]any); isList {
			return bad("the array form of items (tuples) is not supported; use one schema")
		}
		if n.items, err = sub(v, ""); err != nil {
			return err
		}
	case "minItems", "maxItems", "minLength", "maxLength":
		c, ok := count(v)
		if !ok {
			return bad("must be a non-negative integer")
		}
		switch k {
		case "minItems":
			n.minItems = c
		case "maxItems":
			n.maxItems = c
		case "minLength":
			n.minLength = c
		case "maxLength":
			n.maxLength = c
		}
	case "pattern":
		s, ok := v.(string)
		if !ok {
			return bad("must be a string")
		}
		if n.pattern, err = regexp.Compile(s); err != nil {
			return bad("not a valid regular expression (Go RE2 syntax): %v", err)
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		f, ok := number(v)
		if !ok {
			return bad("must be a number")
		}
		switch k {
		case "minimum":
			n.minimum = &f
		case "maximum":
			n.maximum = &f
		case "exclusiveMinimum":
			n.exclusiveMinimum = &f
		case "exclusiveMaximum":
			n.exclusiveMaximum = &f
		}
	case "anyOf":
		n.anyOf, err = subList()
	case "oneOf":
		n.oneOf, err = subList()
	case "allOf":
		n.allOf, err = subList()
	case "description":
		n.hint, _ = v.(string)
	default:
		if slices.Contains(annotations, k) {
			return nil
		}
		return bad("keyword %q is not supported; ccm supports %s (and the annotations %s)",
			k, strings.Join(supported, ", "), strings.Join(annotations, ", "))
	}
	return err
}

func parseTypes(v any) (kind, error) {
	one := func(s any) (kind, error) {
		name, _ := s.(string)
		if name == "number" {
			return kInteger | kNumber, nil
		}
		for _, kn := range kindNames {
			if kn.name == name && name != "number" {
				return kn.k, nil
			}
		}
		return 0, fmt.Errorf("unknown type %v; use null, boolean, integer, number, string, array or object", jsonText(s))
	}
	if list, ok := v.([]any); ok {
		if len(list) == 0 {
			return 0, errors.New("an empty type list accepts nothing")
		}
		var all kind
		for _, e := range list {
			k, err := one(e)
			if err != nil {
				return 0, err
			}
			all |= k
		}
		return all, nil
	}
	return one(v)
}

// count reads a non-negative integer keyword value.
func count(v any) (int, bool) {
	f, ok := number(v)
	if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, false
	}
	return int(f), true
}

// number reads a JSON number decoded with UseNumber.
func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// normalize turns json.Number into float64 throughout a decoded value, so
// enum and const compare with the values a manifest decodes to.
func normalize(v any) any {
	switch t := v.(type) {
	case json.Number:
		f, _ := t.Float64()
		return f
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// jsonKind names the JSON type of a decoded schema value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// jsonText renders a schema value (an enum member, a const) for a message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
