package wire

import (
	"encoding/base64"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit; deeper input is an error, not a
// stack overflow.
const maxDepth = 10000

// decoder reads one JSON document from data.
type decoder struct {
	data  []byte
	pos   int
	depth int
}

// SyntaxError is malformed JSON at byte Offset.
type SyntaxError struct {
	Msg    string
	Offset int
}

func (e *SyntaxError) Error() string {
	return "invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// TypeError is a JSON value that does not fit the Go value it decodes into.
type TypeError struct {
	Value string // "string", "number 1.5", ...
	Type  string // the Go type
	Field string // the key, when in an object
}

func (e *TypeError) Error() string {
	msg := "cannot decode " + e.Value + " into " + e.Type
	if e.Field != "" {
		msg += " (field " + strconv.Quote(e.Field) + ")"
	}
	return msg
}

func (d *decoder) syntax(msg string) error { return &SyntaxError{Msg: msg, Offset: d.pos} }

func (d *decoder) ws() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// peek skips blanks and returns the next byte, 0 at the end.
func (d *decoder) peek() byte {
	d.ws()
	if d.pos >= len(d.data) {
		return 0
	}
	return d.data[d.pos]
}

// end checks nothing but blanks follows the document.
func (d *decoder) end() error {
	if d.ws(); d.pos < len(d.data) {
		return d.syntax("data after the top-level value")
	}
	return nil
}

// null consumes a null literal if one is next.
func (d *decoder) null() (bool, error) {
	if d.peek() != 'n' {
		return false, nil
	}
	return true, d.literal("null")
}

func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return d.syntax("invalid literal")
	}
	d.pos += len(lit)
	return nil
}

// object calls field for each key of an object (null is an empty object);
// field must consume the value. want names the Go type for a type error.
func (d *decoder) object(want string, field func(key string) error) error {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '{':
	default:
		return d.mismatch(want)
	}
	d.depth++
	if d.depth > maxDepth {
		return d.syntax("exceeded max depth")
	}
	d.pos++
	if d.peek() == '}' {
		d.pos++
		d.depth--
		return nil
	}
	for {
		if d.peek() != '"' {
			return d.syntax("expected a string key")
		}
		key, err := d.word()
		if err != nil {
			return err
		}
		if d.peek() != ':' {
			return d.syntax("expected ':' after a key")
		}
		d.pos++
		if err := field(key); err != nil {
			var te *TypeError
			if errors.As(err, &te) && te.Field == "" {
				te.Field = key
			}
			return err
		}
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return nil
		default:
			return d.syntax("expected ',' or '}' in an object")
		}
	}
}

// array calls elem for each element of an array (null is no array: elem is
// never called and isNull is true).
func (d *decoder) array(want string, elem func() error) (isNull bool, err error) {
	switch d.peek() {
	case 'n':
		return true, d.literal("null")
	case '[':
	default:
		return false, d.mismatch(want)
	}
	d.depth++
	if d.depth > maxDepth {
		return false, d.syntax("exceeded max depth")
	}
	d.pos++
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return false, nil
	}
	for {
		if err := elem(); err != nil {
			return false, err
		}
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return false, nil
		default:
			return false, d.syntax("expected ',' or ']' in an array")
		}
	}
}

// mismatch reports the value at pos does not fit want, after checking it is
// at least valid JSON (a syntax error wins, as in encoding/json).
func (d *decoder) mismatch(want string) error {
	start := d.pos
	if err := d.skip(); err != nil {
		return err
	}
	kind := "value"
	switch d.data[start] {
	case '"':
		kind = "string"
	case '{':
		kind = "object"
	case '[':
		kind = "array"
	case 't', 'f':
		kind = "bool"
	default:
		kind = "number " + string(d.data[start:d.pos])
	}
	return &TypeError{Value: kind, Type: want}
}

// skip consumes one value of any kind, checking its syntax.
func (d *decoder) skip() error {
	switch c := d.peek(); {
	case c == '{':
		return d.object("object", func(string) error { return d.skip() })
	case c == '[':
		_, err := d.array("array", d.skip)
		return err
	case c == '"':
		_, err := d.str()
		return err
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		_, err := d.number()
		return err
	case c == 0:
		return d.syntax("unexpected end of input")
	}
	return d.syntax("invalid character " + strconv.QuoteRune(rune(d.data[d.pos])))
}

// raw consumes one value and returns its bytes, as encoding/json gives a
// json.RawMessage (null included).
func (d *decoder) raw() ([]byte, error) {
	d.ws()
	start := d.pos
	if err := d.skip(); err != nil {
		return nil, err
	}
	return append([]byte(nil), d.data[start:d.pos]...), nil
}

// number consumes a number literal and returns its text.
func (d *decoder) number() (string, error) {
	start := d.pos
	i := d.pos
	if i < len(d.data) && d.data[i] == '-' {
		i++
	}
	switch {
	case i < len(d.data) && d.data[i] == '0':
		i++
	case i < len(d.data) && d.data[i] >= '1' && d.data[i] <= '9':
		for i < len(d.data) && isDigit(d.data[i]) {
			i++
		}
	default:
		d.pos = i
		return "", d.syntax("invalid number")
	}
	if i < len(d.data) && d.data[i] == '.' {
		i++
		if i >= len(d.data) || !isDigit(d.data[i]) {
			d.pos = i
			return "", d.syntax("invalid number")
		}
		for i < len(d.data) && isDigit(d.data[i]) {
			i++
		}
	}
	if i < len(d.data) && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		if i < len(d.data) && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if i >= len(d.data) || !isDigit(d.data[i]) {
			d.pos = i
			return "", d.syntax("invalid number")
		}
		for i < len(d.data) && isDigit(d.data[i]) {
			i++
		}
	}
	d.pos = i
	return string(d.data[start:i]), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// str consumes a string literal and returns its value; invalid UTF-8 and
// lone surrogates become U+FFFD, as in encoding/json.
func (d *decoder) str() (string, error) {
	d.pos++ // opening quote
	start := d.pos
	// Fast path: no escapes, valid UTF-8. Plain ASCII is skipped 8 bytes at a
	// time, and UTF-8 is checked only if a byte above ASCII was seen.
	ascii := true
	for i := start; i < len(d.data); i++ {
		i += plainPrefix(d.data[i:])
		if i >= len(d.data) {
			break
		}
		c := d.data[i]
		if c == '"' {
			s := d.data[start:i]
			if ascii || utf8.Valid(s) {
				d.pos = i + 1
				return string(s), nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
		ascii = false
	}
	var out []byte
	i := start
	for {
		if i >= len(d.data) {
			d.pos = i
			return "", d.syntax("unterminated string")
		}
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return string(out), nil
		case c < 0x20:
			d.pos = i
			return "", d.syntax("control character in a string")
		case c == '\\':
			if i+1 >= len(d.data) {
				d.pos = i
				return "", d.syntax("unterminated string")
			}
			i++
			switch d.data[i] {
			case '"', '\\', '/':
				out = append(out, d.data[i])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(d.data, i+1)
				if !ok {
					d.pos = i
					return "", d.syntax("invalid \\u escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					if r2, ok := hex4(d.data, i+3); ok && i+2 < len(d.data) && d.data[i+1] == '\\' && d.data[i+2] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							r = dec
							i += 6
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				d.pos = i
				return "", d.syntax("invalid escape")
			}
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(d.data[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
			} else {
				out = append(out, d.data[i:i+size]...)
			}
			i += size
		}
	}
}

// word is str for the short, plain strings a guest decodes over and over
// (object keys, ensure values, modes): one it knows (common) is returned
// without allocating, any other goes through str. A guest decodes about
// a dozen keys per resource; in wasm their allocations were a third of a
// request's decoding. Interning through a map was tried and was slower
// than allocating (hashing); common's search is comparisons only.
func (d *decoder) word() (string, error) {
	start := d.pos + 1
	for i := start; i < len(d.data) && i-start <= maxCommon; i++ {
		switch c := d.data[i]; {
		case c == '"':
			if w, ok := common(d.data[start:i]); ok {
				d.pos = i + 1
				return w, nil
			}
			return d.str()
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return d.str()
		}
	}
	return d.str()
}

// hex4 reads four hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// String decodes a string (null leaves *v alone). A common word (a file
// type, "root", an ensure value) costs no allocation (word).
func (d *decoder) string(v *string) error {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '"':
		s, err := d.word()
		*v = s
		return err
	}
	return d.mismatch("string")
}

// strs decodes an array of strings (null sets *v to nil), as
// encoding/json would into a []string.
func (d *decoder) strs(v *[]string) error {
	var out []string
	isNull, err := d.array("[]string", func() error {
		var s string
		if d.peek() != '"' {
			return d.mismatch("string")
		}
		err := d.string(&s)
		out = append(out, s)
		return err
	})
	setSlice(v, out, isNull)
	return err
}

func (d *decoder) bool(v *bool) error {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case 't':
		*v = true
		return d.literal("true")
	case 'f':
		*v = false
		return d.literal("false")
	}
	return d.mismatch("bool")
}

// int decodes an integer that must fit bits (encoding/json refuses 1.0 or
// 1e3 for an int).
func (d *decoder) int(v *int64, bits int, typ string) error {
	s, null, err := d.integer(typ)
	if null || err != nil {
		return err
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return &TypeError{Value: "number " + s, Type: typ}
	}
	*v = n
	return nil
}

func (d *decoder) uint(v *uint64, bits int, typ string) error {
	s, null, err := d.integer(typ)
	if null || err != nil {
		return err
	}
	n, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return &TypeError{Value: "number " + s, Type: typ}
	}
	*v = n
	return nil
}

// intField and the other field decoders leave *v alone for null.
func (d *decoder) intField(v *int) error {
	n := int64(*v)
	err := d.int(&n, strconv.IntSize, "int")
	*v = int(n)
	return err
}

func (d *decoder) int64Field(v *int64) error { return d.int(v, 64, "int64") }

func (d *decoder) uint32Field(v *uint32) error {
	n := uint64(*v)
	err := d.uint(&n, 32, "uint32")
	*v = uint32(n)
	return err
}

// bytes decodes a base64 string, as encoding/json does for []byte.
func (d *decoder) bytes(v *[]byte) error {
	switch d.peek() {
	case 'n':
		*v = nil
		return d.literal("null")
	case '"':
	default:
		return d.mismatch("[]byte")
	}
	s, err := d.str()
	if err != nil {
		return err
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, []byte(s))
	if err != nil {
		return &TypeError{Value: "string (bad base64)", Type: "[]byte"}
	}
	*v = b[:n]
	return nil
}

// any decodes a value the way encoding/json decodes into interface{}:
// map[string]any, []any, string, float64, bool or nil.
func (d *decoder) any() (any, error) {
	switch c := d.peek(); {
	case c == '{':
		m := map[string]any{}
		err := d.object("map[string]interface {}", func(key string) error {
			v, err := d.any()
			m[key] = v
			return err
		})
		return m, err
	case c == '[':
		s := []any{}
		_, err := d.array("[]interface {}", func() error {
			v, err := d.any()
			s = append(s, v)
			return err
		})
		return s, err
	case c == '"':
		return d.word()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || isDigit(c):
		s, err := d.number()
		if err != nil {
			return nil, err
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, &TypeError{Value: "number " + s, Type: "float64"}
		}
		return f, nil
	case c == 0:
		return nil, d.syntax("unexpected end of input")
	}
	return nil, d.syntax("invalid character " + strconv.QuoteRune(rune(d.data[d.pos])))
}

// anyMap decodes a JSON object into a map[string]any (null gives nil). Like
// encoding/json, it adds to a map already there (a repeated key).
func (d *decoder) anyMap(v *map[string]any) error {
	if d.peek() == 'n' {
		*v = nil
		return d.literal("null")
	}
	if d.peek() != '{' {
		return d.mismatch("map[string]interface {}")
	}
	if *v == nil {
		*v = map[string]any{}
	}
	m := *v
	return d.object("map[string]interface {}", func(key string) error {
		x, err := d.any()
		m[key] = x
		return err
	})
}

// integer reads the token of an integer field: null (which leaves the field
// alone), or a number's text for the caller to range-check as typ.
func (d *decoder) integer(typ string) (s string, null bool, err error) {
	c := d.peek()
	if c == 'n' {
		return "", true, d.literal("null")
	}
	if c != '-' && !isDigit(c) {
		return "", false, d.mismatch(typ)
	}
	s, err = d.number()
	return s, false, err
}
