package wire

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// encoder appends one JSON document to b; the first error sticks.
type encoder struct {
	b     []byte
	err   error
	depth int
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// object writes the members of a JSON object; begin with e.object().
type object struct {
	e *encoder
	n int
}

func (e *encoder) object() object {
	e.b = append(e.b, '{')
	return object{e: e}
}

func (o *object) end() { o.e.b = append(o.e.b, '}') }

func (o *object) key(k string) *encoder {
	if o.n > 0 {
		o.e.b = append(o.e.b, ',')
	}
	o.n++
	o.e.str(k)
	o.e.b = append(o.e.b, ':')
	return o.e
}

func (o *object) str(k, v string) { o.key(k).str(v) }

func (o *object) strOmit(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *object) bool(k string, v bool) { o.key(k).bool(v) }

func (o *object) boolOmit(k string, v bool) {
	if v {
		o.bool(k, v)
	}
}

func (o *object) int(k string, v int64) { o.key(k).int(v) }

func (o *object) intOmit(k string, v int64) {
	if v != 0 {
		o.int(k, v)
	}
}

func (o *object) bytes(k string, v []byte) { o.key(k).bytes(v) }

func (o *object) bytesOmit(k string, v []byte) {
	if len(v) > 0 {
		o.bytes(k, v)
	}
}

func (o *object) strs(k string, v []string) { o.key(k).strs(v) }

func (o *object) strsOmit(k string, v []string) {
	if len(v) > 0 {
		o.strs(k, v)
	}
}

func (o *object) anyMap(k string, v map[string]any) {
	if v == nil {
		o.key(k).null()
		return
	}
	o.key(k).value(v)
}

func (o *object) anyMapOmit(k string, v map[string]any) {
	if len(v) > 0 {
		o.anyMap(k, v)
	}
}

func (o *object) rawOmit(k string, v json.RawMessage) {
	if len(v) > 0 {
		o.key(k).raw(v)
	}
}

func (e *encoder) null() { e.b = append(e.b, "null"...) }

func (e *encoder) bool(v bool) { e.b = strconv.AppendBool(e.b, v) }

func (e *encoder) int(v int64) { e.b = strconv.AppendInt(e.b, v, 10) }

func (e *encoder) uint(v uint64) { e.b = strconv.AppendUint(e.b, v, 10) }

// float writes f as encoding/json does: no exponent for 1e-6 <= |f| < 1e21.
func (e *encoder) float(f float64, bits int) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fail(errors.New("json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, bits)))
		e.null()
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, bits)
	if format == 'e' {
		// e-09 to e-9, as encoding/json does.
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

const hexDigits = "0123456789abcdef"

// str writes a string literal; invalid UTF-8 becomes U+FFFD, so the output
// is always valid JSON.
func (e *encoder) str(s string) {
	e.b = append(e.b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip plain ASCII 8 bytes at a time; what stops it needs a look.
		if i += plainPrefix(s[i:]); i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			e.b = append(e.b, s[start:i]...)
			switch c {
			case '"', '\\':
				e.b = append(e.b, '\\', c)
			case '\n':
				e.b = append(e.b, '\\', 'n')
			case '\r':
				e.b = append(e.b, '\\', 'r')
			case '\t':
				e.b = append(e.b, '\\', 't')
			default:
				e.b = append(e.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			e.b = append(e.b, s[start:i]...)
			e.b = append(e.b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			e.b = append(e.b, s[start:i]...)
			e.b = append(e.b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	e.b = append(e.b, s[start:]...)
	e.b = append(e.b, '"')
}

func (e *encoder) bytes(v []byte) {
	if v == nil {
		e.null()
		return
	}
	e.b = append(e.b, '"')
	e.b = base64.StdEncoding.AppendEncode(e.b, v)
	e.b = append(e.b, '"')
}

func (e *encoder) strs(v []string) {
	if v == nil {
		e.null()
		return
	}
	e.b = append(e.b, '[')
	for i, s := range v {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(s)
	}
	e.b = append(e.b, ']')
}

// raw writes a JSON document given as bytes, checked and compacted as
// encoding/json does with a json.RawMessage or a Marshaler's output.
func (e *encoder) raw(v []byte) {
	if v == nil {
		e.null()
		return
	}
	d := decoder{data: v}
	if err := d.skip(); err == nil {
		err = d.end()
		if err != nil {
			e.fail(err)
			e.null()
			return
		}
	} else {
		e.fail(err)
		e.null()
		return
	}
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inString && c == '\\':
			e.b = append(e.b, c, v[i+1])
			i++
		case c == '"':
			inString = !inString
			e.b = append(e.b, c)
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
		default:
			e.b = append(e.b, c)
		}
	}
}

// value writes any JSON-shaped Go value: the common ones by type, the rest
// through reflection as encoding/json would (struct json tags included).
func (e *encoder) value(v any) {
	switch v := v.(type) {
	case nil:
		e.null()
	case string:
		e.str(v)
	case bool:
		e.bool(v)
	case float64:
		e.float(v, 64)
	case float32:
		e.float(float64(v), 32)
	case int:
		e.int(int64(v))
	case int64:
		e.int(v)
	case int32:
		e.int(int64(v))
	case uint32:
		e.uint(uint64(v))
	case uint64:
		e.uint(v)
	case json.Number:
		e.number(v)
	case json.RawMessage:
		e.raw(v)
	case []byte:
		e.bytes(v)
	case []string:
		e.strs(v)
	case []any:
		if v == nil {
			e.null()
			return
		}
		if !e.enter() {
			return
		}
		e.b = append(e.b, '[')
		for i, x := range v {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.value(x)
		}
		e.b = append(e.b, ']')
		e.depth--
	case map[string]any:
		if v == nil {
			e.null()
			return
		}
		if !e.enter() {
			return
		}
		o := e.object()
		for _, k := range sortedKeys(v) {
			o.key(k).value(v[k])
		}
		o.end()
		e.depth--
	case map[string]string:
		if v == nil {
			e.null()
			return
		}
		o := e.object()
		for _, k := range sortedKeys(v) {
			o.str(k, v[k])
		}
		o.end()
	case json.Marshaler:
		e.marshaler(v)
	case encoding.TextMarshaler:
		e.textMarshaler(v)
	default:
		e.reflect(reflect.ValueOf(v))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// enter guards against cycles and absurd depth, as encoding/json does.
func (e *encoder) enter() bool {
	e.depth++
	if e.depth > maxDepth {
		e.fail(errors.New("json: value nested too deeply (a cycle?)"))
		e.null()
		return false
	}
	return true
}

func (e *encoder) number(n json.Number) {
	s := string(n)
	if s == "" {
		s = "0"
	}
	d := decoder{data: []byte(s)}
	if _, err := d.number(); err != nil || d.pos != len(s) {
		e.fail(errors.New("json: invalid number literal " + strconv.Quote(s)))
		e.null()
		return
	}
	e.b = append(e.b, s...)
}

func (e *encoder) marshaler(m json.Marshaler) {
	if rv := reflect.ValueOf(m); rv.Kind() == reflect.Pointer && rv.IsNil() {
		e.null()
		return
	}
	b, err := m.MarshalJSON()
	if err != nil {
		e.fail(err)
		e.null()
		return
	}
	e.raw(b)
}

func (e *encoder) textMarshaler(m encoding.TextMarshaler) {
	if rv := reflect.ValueOf(m); rv.Kind() == reflect.Pointer && rv.IsNil() {
		e.null()
		return
	}
	b, err := m.MarshalText()
	if err != nil {
		e.fail(err)
		e.null()
		return
	}
	e.str(string(b))
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// reflect writes values of types value does not list, following
// encoding/json's rules for kinds, struct tags and map keys.
func (e *encoder) reflect(v reflect.Value) {
	if !v.IsValid() {
		e.null()
		return
	}
	if v.Type().Implements(marshalerType) && v.CanInterface() {
		e.marshaler(v.Interface().(json.Marshaler))
		return
	}
	if v.Type().Implements(textMarshalerType) && v.CanInterface() {
		e.textMarshaler(v.Interface().(encoding.TextMarshaler))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		e.bool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.int(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.uint(v.Uint())
	case reflect.Float32:
		e.float(v.Float(), 32)
	case reflect.Float64:
		e.float(v.Float(), 64)
	case reflect.String:
		if v.Type() == reflect.TypeFor[json.Number]() {
			e.number(json.Number(v.String()))
			return
		}
		e.str(v.String())
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			e.null()
			return
		}
		if !e.enter() {
			return
		}
		e.reflect(v.Elem())
		e.depth--
	case reflect.Slice:
		if v.IsNil() {
			e.null()
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(v.Type().Elem()).Implements(marshalerType) &&
			!reflect.PointerTo(v.Type().Elem()).Implements(textMarshalerType) {
			e.bytes(v.Bytes())
			return
		}
		e.reflectList(v)
	case reflect.Array:
		e.reflectList(v)
	case reflect.Map:
		e.reflectMap(v)
	case reflect.Struct:
		e.reflectStruct(v)
	default:
		e.fail(errors.New("json: unsupported type: " + v.Type().String()))
		e.null()
	}
}

func (e *encoder) reflectList(v reflect.Value) {
	if !e.enter() {
		return
	}
	e.b = append(e.b, '[')
	for i := range v.Len() {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.reflect(v.Index(i))
	}
	e.b = append(e.b, ']')
	e.depth--
}

func (e *encoder) reflectMap(v reflect.Value) {
	if v.IsNil() {
		e.null()
		return
	}
	kt := v.Type().Key()
	values := make(map[string]reflect.Value, v.Len())
	for it := v.MapRange(); it.Next(); {
		k := it.Key()
		var ks string
		switch {
		case k.Kind() == reflect.String:
			ks = k.String()
		case kt.Implements(textMarshalerType):
			if k.Kind() == reflect.Pointer && k.IsNil() {
				continue
			}
			b, err := k.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				e.fail(err)
				e.null()
				return
			}
			ks = string(b)
		case k.CanInt():
			ks = strconv.FormatInt(k.Int(), 10)
		case k.CanUint():
			ks = strconv.FormatUint(k.Uint(), 10)
		default:
			e.fail(errors.New("json: unsupported map key type: " + kt.String()))
			e.null()
			return
		}
		values[ks] = it.Value()
	}
	if !e.enter() {
		return
	}
	o := e.object()
	for _, k := range sortedKeys(values) {
		o.key(k).reflect(values[k])
	}
	o.end()
	e.depth--
}

// field is one encoded struct field: its JSON name, where it is, options.
type field struct {
	name      string
	index     []int
	tagged    bool
	omitEmpty bool
	quoted    bool
}

func (e *encoder) reflectStruct(v reflect.Value) {
	if !e.enter() {
		return
	}
	o := e.object()
	for _, f := range structFields(v.Type()) {
		fv, ok := fieldByIndex(v, f.index)
		if !ok || f.omitEmpty && isEmpty(fv) {
			continue
		}
		if f.quoted && quotable(fv.Kind()) {
			inner := encoder{}
			inner.reflect(fv)
			if inner.err != nil {
				e.fail(inner.err)
			}
			o.key(f.name)
			if fv.Kind() == reflect.String {
				e.str(string(inner.b))
			} else {
				e.b = append(e.b, '"')
				e.b = append(e.b, inner.b...)
				e.b = append(e.b, '"')
			}
			continue
		}
		o.key(f.name).reflect(fv)
	}
	o.end()
	e.depth--
}

func quotable(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// fieldByIndex follows index through embedded pointers; ok is false when a
// nil embedded pointer hides the field.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// structFields lists the fields encoding/json encodes for t, by its rules:
// exported fields, embedded structs flattened breadth first, and for each
// name the shallowest field, a tagged one beating an untagged one at the
// same depth; a tie drops the name.
func structFields(t reflect.Type) []field {
	type level struct {
		t     reflect.Type
		index []int
	}
	var all []field
	visited := map[reflect.Type]bool{}
	for current := []level{{t: t}}; len(current) > 0; {
		var next []level
		for _, l := range current {
			if visited[l.t] {
				continue
			}
			visited[l.t] = true
			for i := range l.t.NumField() {
				sf := l.t.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = ""
				}
				index := append(slices.Clone(l.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, level{t: ft, index: index})
					continue
				}
				f := field{name: name, index: index, tagged: name != ""}
				if f.name == "" {
					f.name = sf.Name
				}
				for opt := range strings.SplitSeq(opts, ",") {
					switch opt {
					case "omitempty":
						f.omitEmpty = true
					case "string":
						f.quoted = true
					}
				}
				all = append(all, f)
			}
		}
		current = next
	}
	// By name, then depth, then tagged first: the first of a name dominates
	// unless the second ties it on depth and tagging.
	sortFields(all, func(a, b field) bool {
		if a.name != b.name {
			return a.name < b.name
		}
		if len(a.index) != len(b.index) {
			return len(a.index) < len(b.index)
		}
		if a.tagged != b.tagged {
			return a.tagged
		}
		return slices.Compare(a.index, b.index) < 0
	})
	var out []field
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].name == all[i].name {
			j++
		}
		if j-i == 1 || len(all[i].index) != len(all[i+1].index) || all[i].tagged != all[i+1].tagged {
			out = append(out, all[i])
		}
		i = j
	}
	sortFields(out, func(a, b field) bool { return slices.Compare(a.index, b.index) < 0 })
	return out
}

// sortFields is an insertion sort: structs have few fields, and a generic
// sort instantiated for field would add kilobytes to every plugin.
func sortFields(fs []field, less func(a, b field) bool) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && less(fs[j], fs[j-1]); j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// validTag is encoding/json's rule for a usable tag name.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
