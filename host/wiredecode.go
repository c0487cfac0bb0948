package host

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// decodeOutput decodes a plugin call's output document as json.Unmarshal
// does. The batch answers in the form the SDK writes them (no spaces, the
// keys as the abi spells them, each once, strings without escapes, no
// state document) are read directly (TestDecodeOutputMatches,
// FuzzDecodeOutput); anything else goes through json.Unmarshal, which
// also gives every error.
func decodeOutput(raw []byte, out any) error {
	switch v := out.(type) {
	case *abi.BatchResponse:
		if v.Results == nil {
			if r, ok := fastResults(raw, (*outputScanner).result); ok {
				v.Results = r
				return nil
			}
		}
	case *abi.ValidateBatchResponse:
		if v.Results == nil {
			if r, ok := fastResults(raw, (*outputScanner).validateResult); ok {
				v.Results = r
				return nil
			}
		}
	}
	return json.Unmarshal(raw, out)
}

// fastResults reads {"results":[E,...]} with one E read by elem; not ok
// for anything else (a null or empty list included: json.Unmarshal
// decides those).
func fastResults[T any](raw []byte, elem func(*outputScanner, *T) bool) ([]T, bool) {
	s := outputScanner{b: raw}
	if !s.lit(`{"results":[`) {
		return nil, false
	}
	var out []T
	for {
		var zero T
		out = append(out, zero)
		if !elem(&s, &out[len(out)-1]) {
			return nil, false
		}
		if s.lit(",") {
			continue
		}
		if s.lit("]}") && s.i == len(s.b) {
			return out, true
		}
		return nil, false
	}
}

type outputScanner struct {
	b []byte
	i int
	// last are the strings read last under two keys a batch's results
	// mostly share (provider, final_ensure): an equal one is not copied
	// again.
	last [2]string
}

// same reads a string, the one read last for slot when they are equal.
func (s *outputScanner) same(slot int) (string, bool) {
	start := s.i
	v, ok := s.strBytes()
	if !ok {
		s.i = start
		return "", false
	}
	if string(v) != s.last[slot] {
		s.last[slot] = string(v)
	}
	return s.last[slot], true
}

func (s *outputScanner) lit(l string) bool {
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

// key reads "name": with name of lower-case letters and '_' only; the
// name is a slice of the document.
func (s *outputScanner) key() ([]byte, bool) {
	if !s.lit(`"`) {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) && (s.b[s.i] >= 'a' && s.b[s.i] <= 'z' || s.b[s.i] == '_') {
		s.i++
	}
	k := s.b[start:s.i]
	if !s.lit(`":`) {
		return nil, false
	}
	return k, true
}

// str reads a string without escapes or control characters, valid UTF-8:
// json.Unmarshal keeps such a string's bytes as they are.
func (s *outputScanner) str() (string, bool) {
	v, ok := s.strBytes()
	return string(v), ok
}

// strBytes is str's text, a slice of the document.
func (s *outputScanner) strBytes() ([]byte, bool) {
	if !s.lit(`"`) {
		return nil, false
	}
	start, ascii := s.i, true
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		if c == '"' {
			v := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			return v, true
		}
		if c < 0x20 || c == '\\' {
			return nil, false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	return nil, false
}

func (s *outputScanner) boolean() (bool, bool) {
	if s.lit("true") {
		return true, true
	}
	return false, s.lit("false")
}

// strs reads a list of strings: null is nil, [] an empty list, as
// json.Unmarshal decodes them into a nil slice.
func (s *outputScanner) strs() ([]string, bool) {
	if s.lit("null") {
		return nil, true
	}
	if s.lit("[]") {
		return []string{}, true
	}
	if !s.lit("[") {
		return nil, false
	}
	var out []string
	for {
		v, ok := s.str()
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if s.lit(",") {
			continue
		}
		return out, s.lit("]")
	}
}

// integer reads 0 or a number without leading zeros, sign or fraction.
func (s *outputScanner) integer() (int64, bool) {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	digits := s.b[start:s.i]
	if len(digits) == 0 || (len(digits) > 1 && digits[0] == '0') || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for _, d := range digits { // at most 18 digits: no overflow
		n = n*10 + int64(d-'0')
	}
	return n, true
}

// fields reads an object's keys: next returns each key's index in keys,
// after which the caller reads its value; -1 at the object's end; not ok
// for a key not in keys, a repeated key, or anything unexpected.
type fields struct {
	s     *outputScanner
	keys  []string
	seen  uint32
	first bool
}

func (s *outputScanner) fields(keys []string) (fields, bool) {
	return fields{s: s, keys: keys, first: true}, s.lit("{")
}

func (f *fields) next() (int, bool) {
	if f.first {
		f.first = false
		if f.s.lit("}") {
			return -1, true
		}
	} else {
		if f.s.lit("}") {
			return -1, true
		}
		if !f.s.lit(",") {
			return 0, false
		}
	}
	k, ok := f.s.key()
	if !ok {
		return 0, false
	}
	for i, name := range f.keys {
		if string(k) == name {
			if f.seen&(1<<i) != 0 {
				return 0, false // a repeated key: json.Unmarshal's rules
			}
			f.seen |= 1 << i
			return i, true
		}
	}
	return 0, false // "state" and any other key: json.Unmarshal
}

var resultKeys = []string{"changed", "refreshed", "provider", "final_ensure", "noop_message", "messages", "diff", "error", "duration_ns"}

func (s *outputScanner) result(r *abi.Result) bool {
	f, ok := s.fields(resultKeys)
	for ok {
		var k int
		if k, ok = f.next(); !ok || k < 0 {
			break
		}
		switch k {
		case 0:
			r.Changed, ok = s.boolean()
		case 1:
			r.Refreshed, ok = s.boolean()
		case 2:
			r.Provider, ok = s.same(0)
		case 3:
			r.FinalEnsure, ok = s.same(1)
		case 4:
			r.NoopMessage, ok = s.str()
		case 5:
			r.Messages, ok = s.strs()
		case 6:
			r.Diff, ok = s.str()
		case 7:
			r.Error, ok = s.str()
		case 8:
			r.DurationNS, ok = s.integer()
		}
	}
	return ok
}

var validateKeys = []string{"errors", "handle"}

func (s *outputScanner) validateResult(r *abi.ValidateResponse) bool {
	f, ok := s.fields(validateKeys)
	for ok {
		var k int
		if k, ok = f.next(); !ok || k < 0 {
			break
		}
		switch k {
		case 0:
			r.Errors, ok = s.strs()
		case 1:
			r.Handle, ok = s.integer()
		}
	}
	return ok
}
