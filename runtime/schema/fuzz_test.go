package schema

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValidate compiles an arbitrary schema and validates an arbitrary JSON
// value against it: neither may panic or hang, and every problem must be a
// non-empty message.
func FuzzValidate(f *testing.F) {
	f.Add(fileSchema, `{"name":"/x","mode":"0644","returns":[0,1]}`)
	f.Add(`{"anyOf":[{"type":"string"},{"oneOf":[{"const":1},{"enum":[1,2]}]}]}`, `1`)
	f.Add(`{"type":"object","additionalProperties":false,"properties":{"a":{"items":{"pattern":"^x"}}}}`, `{"a":["x","y"],"b":null}`)
	f.Add(`{"allOf":[true,false]}`, `null`)
	f.Fuzz(func(t *testing.T, doc, value string) {
		s, err := Compile([]byte(doc))
		if err != nil {
			if !strings.Contains(err.Error(), ErrInvalid.Error()) {
				t.Fatalf("error without ErrInvalid: %v", err)
			}
			return
		}
		var v any
		if json.Unmarshal([]byte(value), &v) != nil {
			return
		}
		for _, p := range s.Validate(v) {
			if p.Message == "" {
				t.Fatalf("empty message for %+v", p)
			}
		}
	})
}
