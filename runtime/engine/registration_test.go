package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// TestRegisterWhenStableGate: entries are handed to Options.Register with
// their templates expanded, once per stable resource, and never for a
// failed, skipped or noop one; a failing Register fails the resource; no
// Register says the entries were not published. The NATS side is tested
// end to end in cmd/ccm (registration_e2e_test.go).
func TestRegisterWhenStableGate(t *testing.T) {
	reg := func(name string) string {
		return fmt.Sprintf(`{register_when_stable: [{cluster: c, service: %s, protocol: p, address: "10.0.0.{{ 1 + 1 }}", port: "{{ Data.port }}", priority: 1}]`, name)
	}
	dir := tree(t, map[string]string{"m.yaml": `
data:
  port: 8080
ccm:
  resources:
    - mark:
        - ok: ` + reg("ok") + `}
        - failed: ` + reg("failed") + `, fail: boom}
        - skipped: ` + reg("skipped") + `, control: {if: "false"}}
        - after: ` + reg("after") + `, require: ["mark#failed"]}
        - bad: ` + reg("bad") + `}
`})
	m := filepath.Join(dir, "m.yaml")
	var got []map[string]any
	register := func(_ context.Context, e map[string]any, _ trust.Chain) (string, error) {
		if e["service"] == "bad" {
			return "", errors.New("nats: no servers available for connection")
		}
		got = append(got, e)
		return fmt.Sprint(e["service"]), nil
	}
	res, err := run(t, &fakePlugins{}, m, func(o *Options) { o.Register = register })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["service"] != "ok" || got[0]["address"] != "10.0.0.2" || got[0]["port"] != 8080 {
		t.Fatalf("registered %v", got)
	}
	if e := event(t, res, "mark#ok"); !slices.Contains(e.Messages, "registered ok") {
		t.Fatalf("%+v", e)
	}
	if e := event(t, res, "mark#bad"); !e.Failed || !strings.Contains(strings.Join(e.Error, ";"), "m.yaml:11: register_when_stable[0]: nats: no servers available") {
		t.Fatalf("%+v", e)
	}

	got = nil
	if _, err := run(t, &fakePlugins{}, m, func(o *Options) { o.Register = register; o.Noop = true }); err != nil || len(got) != 0 {
		t.Fatalf("noop registered %v %v", got, err)
	}
	res, err = run(t, &fakePlugins{}, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := event(t, res, "mark#ok"); e.Failed || !strings.Contains(strings.Join(e.Messages, ";"), "not published: no registration destination is configured") {
		t.Fatalf("%+v", e)
	}
}
