package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// schemaPlugins is fakePlugins whose mark type declares a properties schema;
// it counts the resources sent to ccm_validate.
type schemaPlugins struct {
	*fakePlugins
	schema    string
	validated int
}

func (s *schemaPlugins) Info(ctx context.Context, caller trust.Caller, typ string) (abi.PluginInfo, error) {
	info, err := s.fakePlugins.Info(ctx, caller, typ)
	info.PropertiesSchema = json.RawMessage(s.schema)
	return info, err
}

func (s *schemaPlugins) Validate(ctx context.Context, caller trust.Caller, typ string, reqs []abi.ValidateRequest) ([]abi.ValidateResponse, error) {
	s.validated += len(reqs)
	return s.fakePlugins.Validate(ctx, caller, typ, reqs)
}

const markSchema = `{"type":"object","additionalProperties":false,"required":["name"],"properties":{
	"name":{"type":"string"},"ensure":{"type":"string"},"changed":{"type":"boolean"},"fail":{"type":"string"},
	"later":{"type":"string","pattern":"^ok"},"value":{"type":"integer","minimum":1}}}`

func runSchema(t *testing.T, sp *schemaPlugins, files map[string]string, mod func(*Options)) (*Result, error) {
	t.Helper()
	dir := tree(t, files)
	opts := Options{Plugins: sp}
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return New(opts).Run(ctx, filepath.Join(dir, "m.yaml"))
}

func TestSchemaValidationAtLoad(t *testing.T) {
	tests := []struct {
		name      string
		manifest  string
		schema    string
		noSchema  bool
		want      []string // each in the load error; none = loads
		validated int      // resources sent to ccm_validate
	}{
		{
			name:      "valid",
			manifest:  "ccm:\n  resources:\n    - mark:\n        - a: {changed: true, value: 2}\n",
			validated: 1,
		},
		{
			name: "every problem of every resource, with file and line",
			manifest: "ccm:\n  resources:\n    - mark:\n        - a: {changed: yes please, value: 0}\n" +
				"        - b: {chnaged: true}\n        - c: {value: 3}\n",
			want: []string{
				`m.yaml:4: mark#a: property "changed": must be a boolean, got a string`,
				`m.yaml:4: mark#a: property "value": must be at least 1`,
				`m.yaml:5: mark#b: unknown property "chnaged"; did you mean "changed"?`,
			},
			validated: 1, // only c reaches ccm_validate
		},
		{
			name:      "null is unset",
			manifest:  "ccm:\n  resources:\n    - mark:\n        - a: {fail: null}\n",
			validated: 1,
		},
		{
			name:      "a deferred template is checked when it runs",
			manifest:  "data:\n  x: okay\nccm:\n  resources:\n    - mark:\n        - a: {later: \"{{ Data.x }}\"}\n",
			validated: 2, // at load without it, when it runs with it
		},
		{
			name:      "NO_SCHEMA_VALIDATION skips the schema, not ccm_validate",
			manifest:  "ccm:\n  resources:\n    - mark:\n        - a: {value: 0}\n",
			noSchema:  true,
			validated: 1,
		},
		{
			name:     "an invalid schema fails the plugin once",
			manifest: "ccm:\n  resources:\n    - mark:\n        - a: {}\n        - b: {}\n",
			schema:   `{"properties":{"x":{"$ref":"#/y"}}}`,
			want:     []string{`m.yaml:4: mark#a: plugin mark 1: invalid properties schema: at /properties/x/$ref: keyword "$ref" is not supported`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := &schemaPlugins{fakePlugins: &fakePlugins{}, schema: markSchema}
			if tc.schema != "" {
				sp.schema = tc.schema
			}
			res, err := runSchema(t, sp, map[string]string{"m.yaml": tc.manifest}, func(o *Options) { o.NoSchemaValidation = tc.noSchema })
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("load failed: %v", err)
				}
				if res.Failed() {
					t.Fatalf("a resource failed: %v", res.Events)
				}
			} else {
				if err == nil {
					t.Fatalf("loaded, want errors %q", tc.want)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				if n := strings.Count(err.Error(), "\n") + 1; n != len(tc.want) {
					t.Errorf("%d errors, want %d:\n%v", n, len(tc.want), err)
				}
				if len(sp.calls) > 0 {
					t.Fatalf("something ran after a load error: %v", sp.calls)
				}
			}
			if sp.validated != tc.validated {
				t.Errorf("%d resources sent to ccm_validate, want %d", sp.validated, tc.validated)
			}
		})
	}
}

func TestSchemaChecksDeferredValueWhenItRuns(t *testing.T) {
	sp := &schemaPlugins{fakePlugins: &fakePlugins{}, schema: markSchema}
	res, err := runSchema(t, sp, map[string]string{"m.yaml": "data:\n  good: okay\n  bad: nope\n" +
		"ccm:\n  resources:\n    - mark:\n        - a: {later: \"{{ Data.bad }}\"}\n        - b: {later: \"{{ Data.good }}\"}\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev := event(t, res, "mark#a"); !ev.Failed || !strings.Contains(strings.Join(ev.Error, "\n"), `invalid after template expansion: property "later": must match the pattern ^ok`) {
		t.Fatalf("mark#a: failed %v, error %q", ev.Failed, ev.Error)
	}
	if ev := event(t, res, "mark#b"); ev.Failed {
		t.Fatalf("mark#b failed: %s", ev.Error)
	}
}
