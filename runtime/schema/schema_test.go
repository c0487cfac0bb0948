package schema

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCompileErrors(t *testing.T) {
	deep := strings.Repeat(`{"items":`, MaxDepth+2) + `true` + strings.Repeat(`}`, MaxDepth+2)
	tests := []struct {
		name, doc, want string
	}{
		{"not json", `{"type":`, "not JSON"},
		{"two values", `{} {}`, "more than one JSON value"},
		{"not a schema", `"string"`, "must be an object or a boolean, got a string"},
		{"unknown keyword", `{"properties":{"a":{"$ref":"#/x"}}}`, `at /properties/a/$ref: keyword "$ref" is not supported`},
		{"unknown type", `{"type":"text"}`, `unknown type "text"`},
		{"empty type list", `{"type":[]}`, "accepts nothing"},
		{"bad pattern", `{"pattern":"(["}`, "not a valid regular expression"},
		{"bad minLength", `{"minLength":-1}`, "non-negative integer"},
		{"fractional maxItems", `{"maxItems":1.5}`, "non-negative integer"},
		{"min above max", `{"minItems":3,"maxItems":1}`, "minItems 3 is above maxItems 1"},
		{"bad minimum", `{"minimum":"1"}`, "must be a number"},
		{"empty enum", `{"enum":[]}`, "non-empty array"},
		{"empty anyOf", `{"anyOf":[]}`, "non-empty array of schemas"},
		{"bad anyOf member", `{"anyOf":[{"type":"string"},3]}`, "at /anyOf/1: a schema must be an object or a boolean"},
		{"tuple items", `{"items":[{"type":"string"}]}`, "tuples"},
		{"required not strings", `{"required":[1]}`, "array of strings"},
		{"required twice", `{"required":["a","a"]}`, `lists "a" twice`},
		{"properties not object", `{"properties":[]}`, "must be an object"},
		{"too deep", deep, "nested more than"},
		{"pointer escaping", `{"properties":{"a/b":{"if":true}}}`, "at /properties/a~1b/if"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]byte(tc.doc))
			if err == nil {
				t.Fatalf("Compile(%s) succeeded, want error containing %q", tc.doc, tc.want)
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile error = %v, want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

func TestCompileAccepts(t *testing.T) {
	for _, doc := range []string{
		``, `null`, `true`, `false`, `{}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"x","description":"y","default":1,"examples":[1],"format":"uri","$comment":"c","deprecated":true,"readOnly":false,"writeOnly":false,"$id":"x"}`,
		`{"type":["string","null"],"minLength":0,"maxLength":0}`,
	} {
		if _, err := Compile([]byte(doc)); err != nil {
			t.Errorf("Compile(%q) = %v, want success", doc, err)
		}
	}
}

// fileSchema looks like a real plugin's.
const fileSchema = `{"type":"object","required":["name"],"additionalProperties":false,"properties":{
	"name":{"type":"string","minLength":1},
	"ensure":{"enum":["present","absent","directory"]},
	"content":{"type":["string","number","boolean","null"]},
	"mode":{"type":"string","pattern":"^(0[oO])?[0-7]{3,4}$","description":"an octal string such as \"0644\""},
	"force":{"type":"boolean"},
	"returns":{"anyOf":[{"type":"integer","minimum":0,"maximum":255},{"type":"array","minItems":1,"items":{"type":"integer","minimum":0,"maximum":255}}]},
	"environment":{"type":"array","items":{"type":"string","pattern":"^[^=]+=[\\s\\S]+$"}},
	"opts":{"type":"object","properties":{"level":{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10}},"additionalProperties":{"type":"string","maxLength":3}},
	"kind":{"oneOf":[{"const":"a"},{"type":"string","pattern":"^a|b$"}]},
	"tag":{"allOf":[{"type":"string"},{"minLength":2}]},
	"never":false
}}`

func TestValidate(t *testing.T) {
	s := mustCompile(fileSchema)
	base := func(kv ...any) map[string]any {
		m := map[string]any{"name": "/etc/motd"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		props map[string]any
		want  []string
	}{
		{"minimal", base(), nil},
		{"all good", base("ensure", "present", "content", 8080, "mode", "0644", "force", false,
			"returns", []any{0, 2.0}, "environment", []any{"A=b=c", "B=x\ny"}, "opts", map[string]any{"level": 3, "x": "abc"},
			"kind", "b", "tag", "ab"), nil},
		{"content null", base("content", nil), nil},
		{"returns scalar", base("returns", 3), nil},
		{"placeholder", base("mode", Placeholder{}, "environment", Placeholder{}), nil},
		{"placeholder satisfies required", map[string]any{"name": Placeholder{}}, nil},
		{"missing required", map[string]any{}, []string{`property "name": is required`}},
		{"wrong type", base("mode", 420), []string{`property "mode": must be a string, got an integer (an octal string such as "0644")`}},
		{"wrong type list", base("content", []any{"a"}), []string{`property "content": must be a string, a number, a boolean or null, got a list`}},
		{"pattern", base("mode", "0999"), []string{`property "mode": must match the pattern ^(0[oO])?[0-7]{3,4}$`}},
		{"enum", base("ensure", "gone"), []string{`property "ensure": must be one of "present", "absent", "directory"`}},
		{"unknown with hint", base("contnet", "x"), []string{`unknown property "contnet"; did you mean "content"?`}},
		{"unknown without hint", base("zzzzzzzz", 1), []string{`unknown property "zzzzzzzz"; known: content, `}},
		{"false schema", base("never", 1), []string{`property "never": no value is allowed here`}},
		{"minLength", base("name", ""), []string{`property "name": must be at least 1 characters long`}},
		{"anyOf wrong type", base("returns", "0"), []string{`property "returns": must be an integer or a list, got a string`}},
		{"anyOf closest branch", base("returns", []any{0, 300, "x"}), []string{
			`property "returns[1]": must be at most 255`, `property "returns[2]": must be an integer, got a string`}},
		{"anyOf minimum", base("returns", -1), []string{`property "returns": must be at least 0`}},
		{"anyOf empty list", base("returns", []any{}), []string{`property "returns": must have at least 1 item`}},
		{"integer vs fraction", base("returns", 1.5), []string{`property "returns": must be an integer or a list, got a number`}},
		{"items pattern", base("environment", []any{"A=1", "=x", "B="}), []string{
			`property "environment[1]": must match the pattern`, `property "environment[2]": must match the pattern`}},
		{"nested object", base("opts", map[string]any{"level": 10, "x": "abcd", "y": 1}), []string{
			`property "opts.level": must be less than 10`, `property "opts.x": must be at most 3 characters long`, `property "opts.y": must be a string, got an integer`}},
		{"exclusive minimum", base("opts", map[string]any{"level": 0}), []string{`property "opts.level": must be greater than 0`}},
		{"oneOf two match", base("kind", "a"), []string{`property "kind": matches 2 of the alternatives, but must match exactly one`}},
		{"oneOf none", base("kind", "c"), []string{`property "kind": must`}},
		{"allOf", base("tag", "x"), []string{`property "tag": must be at least 2 characters long`}},
		{"all problems at once", map[string]any{"mode": true, "ensure": "x", "typo": 1}, []string{
			`property "ensure": must be one of`, `property "mode": must be a string, got a boolean`, `property "name": is required`, `unknown property "typo"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := s.Strings(tc.props)
			if len(got) != len(tc.want) {
				t.Fatalf("Validate = %q, want %d problems like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestValidateNeverPrintsValues(t *testing.T) {
	s := mustCompile(fileSchema)
	secret := "hunter2-secret"
	props := map[string]any{"name": "/x", "mode": secret, "ensure": secret, "kind": secret, "tag": 1, "opts": map[string]any{"k": secret}}
	for _, p := range s.Strings(props) {
		if strings.Contains(p, secret) {
			t.Errorf("message prints the value: %s", p)
		}
	}
}

func TestNilSchemaAcceptsAll(t *testing.T) {
	var s *Schema
	if got := s.Validate(map[string]any{"x": 1}); got != nil {
		t.Fatalf("nil schema: %v", got)
	}
	s, err := Compile(nil)
	if err != nil || s != nil {
		t.Fatalf("Compile(nil) = %v, %v", s, err)
	}
}

func TestGoValueKinds(t *testing.T) {
	s := mustCompile(`{"properties":{"l":{"type":"array","items":{"type":"integer"}},"m":{"type":"object","additionalProperties":{"type":"string"}},"i":{"enum":[3]},"f":{"const":{"a":[1,"x"]}}}}`)
	tests := []struct {
		name string
		v    map[string]any
		bad  int
	}{
		{"typed slices", map[string]any{"l": []int{1, 2}, "m": map[string]string{"a": "b"}}, 0},
		{"int64 enum", map[string]any{"i": int64(3)}, 0},
		{"uint8 enum", map[string]any{"i": uint8(3)}, 0},
		{"float enum", map[string]any{"i": 3.0}, 0},
		{"const deep", map[string]any{"f": map[string]any{"a": []any{1, "x"}}}, 0},
		{"const differs", map[string]any{"f": map[string]any{"a": []any{1, "y"}}}, 1},
		{"typed slice bad item", map[string]any{"l": []string{"x"}}, 1},
		{"func value", map[string]any{"m": func() {}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.Strings(tc.v); len(got) != tc.bad {
				t.Fatalf("Validate = %q, want %d problems", got, tc.bad)
			}
		})
	}
}

// TestValidateManyIsFast guards the budget of the load: 2000 resources must
// validate in well under 10 ms altogether.
func TestValidateManyIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	s := mustCompile(fileSchema)
	res := testing.Benchmark(func(b *testing.B) {
		props := make([]map[string]any, 2000)
		for i := range props {
			props[i] = map[string]any{"name": fmt.Sprintf("/tmp/f%d", i), "ensure": "present", "content": "x", "mode": "0644", "force": false}
		}
		b.ResetTimer()
		for b.Loop() {
			for _, p := range props {
				if s.Validate(p) != nil {
					b.Fatal("unexpected problem")
				}
			}
		}
	})
	per := res.NsPerOp()
	t.Logf("2000 resources: %.2f ms", float64(per)/1e6)
	if per > 10e6 && !raceEnabled {
		t.Errorf("2000 resources took %.2f ms, want well under 10 ms", float64(per)/1e6)
	}
}

func BenchmarkValidate(b *testing.B) {
	s := mustCompile(fileSchema)
	p := map[string]any{"name": "/tmp/f", "ensure": "present", "content": "x", "mode": "0644", "force": false}
	for b.Loop() {
		s.Validate(p)
	}
}

func BenchmarkCompile(b *testing.B) {
	for b.Loop() {
		if _, err := Compile([]byte(fileSchema)); err != nil {
			b.Fatal(err)
		}
	}
}

// mustCompile is Compile for the schemas written in these tests.
func mustCompile(doc string) *Schema {
	s, err := Compile([]byte(doc))
	if err != nil {
		panic("BUG: " + err.Error())
	}
	return s
}
