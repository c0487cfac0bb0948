// Package flat holds a resource's properties as a flat list of keys and
// typed values, the form in which the SDK hands a validation request to an
// sdk.FlatPreparer: decoding a request's properties into a map[string]any
// (a map, its hashing, a boxed value per property) and then reading that
// map back was most of what validating a resource cost a Go guest.
//
// Props is what a JSON object decodes to (keys unique, the last of a
// repeated key winning, as in a map) and Value one of its values: a
// string, number, boolean or null read without boxing, a list or a map kept
// as encoding/json decodes them into an interface ([]any, map[string]any).
// Value.Any gives the value a map[string]any would have held.
//
// It imports only the standard library and builds natively and for wasip1.
package flat

// Kind is what kind of JSON value a Value holds.
type Kind uint8

// The kinds of Value. Other is a Go value of no JSON kind, given to ValueOf
// (a map converted by FromMap may hold one).
const (
	KindNull Kind = iota
	KindString
	KindNumber
	KindBool
	KindList
	KindMap
	KindOther
)

// Value is one property value. The zero Value is null.
type Value struct {
	kind Kind
	b    bool
	s    string
	f    float64
	// x is the value as given to ValueOf (any kind), or a decoded list or
	// map; nil for the scalars of String, Number and Boolean.
	x any
}

// String is the Value of a JSON string.
func String(s string) Value { return Value{kind: KindString, s: s} }

// Number is the Value of a JSON number, decoded as encoding/json decodes
// it into an interface (float64).
func Number(f float64) Value { return Value{kind: KindNumber, f: f} }

// Boolean is the Value of true or false.
func Boolean(b bool) Value { return Value{kind: KindBool, b: b} }

// ValueOf classifies v, a JSON-shaped Go value: string, bool, float64, int
// and int64 (numbers), []any, []string and []int (lists), map[string]any,
// nil. Any other type is KindOther. Any returns v itself.
func ValueOf(v any) Value {
	switch t := v.(type) {
	case nil:
		return Value{}
	case string:
		return Value{kind: KindString, s: t, x: v}
	case bool:
		return Value{kind: KindBool, b: t, x: v}
	case float64:
		return Value{kind: KindNumber, f: t, x: v}
	case int:
		return Value{kind: KindNumber, f: float64(t), x: v}
	case int64:
		return Value{kind: KindNumber, f: float64(t), x: v}
	case []any, []string, []int:
		return Value{kind: KindList, x: v}
	case map[string]any:
		return Value{kind: KindMap, x: v}
	}
	return Value{kind: KindOther, x: v}
}

// Kind reports the value's kind.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether the value is null.
func (v Value) IsNull() bool { return v.kind == KindNull }

// Str returns the string of a KindString value, "" for any other.
func (v Value) Str() string { return v.s }

// Num returns the number of a KindNumber value, 0 for any other.
func (v Value) Num() float64 { return v.f }

// Bool returns the boolean of a KindBool value, false for any other.
func (v Value) Bool() bool { return v.b }

// Any returns the value as a map[string]any would hold it: the value given
// to ValueOf, else string, float64, bool, nil, or the decoded []any or
// map[string]any. For a scalar not made by ValueOf it allocates.
func (v Value) Any() any {
	if v.x != nil {
		return v.x
	}
	switch v.kind {
	case KindString:
		return v.s
	case KindNumber:
		return v.f
	case KindBool:
		return v.b
	}
	return nil
}

// Property is one key and its value.
type Property struct {
	Key   string
	Value Value
}

// indexFrom is the length from which Props indexes its keys in a map;
// shorter lists are searched, which for the few keys of a resource costs
// less than hashing (and allocates nothing).
const indexFrom = 16

// Props is a set of properties in the order their keys were first set.
// The zero Props is empty and ready to use. A Props handed to a plugin by
// the SDK is valid only during that call: keep what you read from it (its
// strings may be kept), not the Props.
type Props struct {
	list  []Property
	index map[string]int
}

// FromMap returns the properties of m, in no particular order (a map has
// none); a nil map gives empty properties.
func FromMap(m map[string]any) *Props {
	p := &Props{list: make([]Property, 0, len(m))}
	for k, v := range m {
		p.list = append(p.list, Property{Key: k, Value: ValueOf(v)})
	}
	if len(p.list) >= indexFrom {
		p.reindex()
	}
	return p
}

// Reset empties p, keeping its storage.
func (p *Props) Reset() {
	clear(p.list)
	p.list = p.list[:0]
	p.index = nil
}

// Set sets key to v, replacing the value of a key already set (its place
// in the order stays), as decoding a JSON object with a repeated key into
// a map keeps the last value.
func (p *Props) Set(key string, v Value) {
	if i := p.find(key); i >= 0 {
		p.list[i].Value = v
		return
	}
	p.list = append(p.list, Property{Key: key, Value: v})
	switch {
	case p.index != nil:
		p.index[key] = len(p.list) - 1
	case len(p.list) >= indexFrom:
		p.reindex()
	}
}

func (p *Props) reindex() {
	p.index = make(map[string]int, 2*len(p.list))
	for i, e := range p.list {
		p.index[e.Key] = i
	}
}

func (p *Props) find(key string) int {
	if p.index != nil {
		if i, ok := p.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range p.list {
		if p.list[i].Key == key {
			return i
		}
	}
	return -1
}

// Get returns the value of key, and whether it is set (null counts as set,
// as a key present with a nil value in a map).
func (p *Props) Get(key string) (Value, bool) {
	if p == nil {
		return Value{}, false
	}
	if i := p.find(key); i >= 0 {
		return p.list[i].Value, true
	}
	return Value{}, false
}

// Len is the number of properties.
func (p *Props) Len() int {
	if p == nil {
		return 0
	}
	return len(p.list)
}

// At returns the i-th property, 0 <= i < Len().
func (p *Props) At(i int) Property { return p.list[i] }

// Map returns the properties as a map[string]any, each value as Any gives
// it: what decoding the same JSON object into a map gives.
func (p *Props) Map() map[string]any {
	m := make(map[string]any, p.Len())
	for i := range p.Len() {
		m[p.list[i].Key] = p.list[i].Value.Any()
	}
	return m
}
