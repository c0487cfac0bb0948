package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/trust"
)

// tree writes files (path → content) under a new temp dir and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func run(t *testing.T, f *fakePlugins, path string, mod func(*Options)) (*Result, error) {
	t.Helper()
	opts := Options{Plugins: f, Facts: map[string]any{"host": map[string]any{"info": map[string]any{"hostname": "h1"}}}}
	if mod != nil {
		mod(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return New(opts).Run(ctx, path)
}

func event(t *testing.T, res *Result, ref string) *session.Event {
	t.Helper()
	var found *session.Event
	for _, e := range res.Events {
		if e.Ref() == ref {
			found = e
		}
	}
	if found == nil {
		t.Fatalf("no event for %s; events: %v", ref, refs(res))
	}
	return found
}

func refs(res *Result) []string {
	var out []string
	for _, e := range res.Events {
		out = append(out, e.Ref()+"="+e.Outcome())
	}
	return out
}

func TestRunOrderAndOutcomes(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": `
ccm:
  resources:
    - mark:
        - a: {}
        - b: {changed: true}
    - mark:
        - c: {fail: boom}
        - d: {}
`})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("order = %v", got)
	}
	s := res.Summary
	if s.Total != 4 || s.Stable != 2 || s.Changed != 1 || s.Failed != 1 || s.TotalErrors != 1 {
		t.Fatalf("summary = %+v", s)
	}
	if e := event(t, res, "mark#c"); !e.Failed || e.Changed || e.Error[0] != "boom" {
		t.Fatalf("mark#c = %+v", e)
	}
}

func TestRequire(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": `
ccm:
  resources:
    - mark:
        - bad: {fail: boom}
        - ok: {}
        - off: {control: {if: "false"}}
        - needs-bad: {require: [mark#bad]}
        - chained: {require: [mark#needs-bad]}
        - needs-ok-and-off: {require: [mark#ok, mark#off]}
        - needs-parent: {require: [mark#nowhere]}
`})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := event(t, res, "mark#needs-bad"); !e.Skipped || !slices.Equal(e.UnmetRequirements, []string{"mark#bad"}) {
		t.Fatalf("needs-bad = %+v", e)
	}
	if e := event(t, res, "mark#chained"); !e.Skipped || !slices.Equal(e.UnmetRequirements, []string{"mark#needs-bad"}) {
		t.Fatalf("chained should be skipped through the chain: %+v", e)
	}
	if e := event(t, res, "mark#needs-ok-and-off"); e.Skipped || e.Failed {
		t.Fatalf("a control-skipped dependency must not block: %+v", e)
	}
	if e := event(t, res, "mark#needs-parent"); !e.Failed || !strings.Contains(e.Error[0], "unknown requirement mark#nowhere") {
		t.Fatalf("needs-parent = %+v", e)
	}
	if res.Summary.UnmetRequirements != 2 {
		t.Fatalf("unmet = %d", res.Summary.UnmetRequirements)
	}
}

func TestLoadErrorsChangeNothing(t *testing.T) {
	tests := []struct {
		name, manifest, want string
	}{
		{"forward require", "ccm:\n  resources:\n    - mark:\n        - a: {require: [mark#b]}\n        - b: {}\n", "declared later"},
		{"self require", "ccm:\n  resources:\n    - mark:\n        - a: {require: [mark#a]}\n", "itself"},
		{"forward subscribe", "ccm:\n  resources:\n    - mark:\n        - a: {subscribe: [mark#b]}\n        - b: {}\n", "declared later"},
		{"unknown type", "ccm:\n  resources:\n    - nope:\n        - a: {}\n", `unknown resource type "nope"`},
		{"invalid property", "ccm:\n  resources:\n    - mark:\n        - a: {colour: red}\n", "unknown property colour"},
		{"bad apply property", "ccm:\n  resources:\n    - apply:\n        - x.yaml: {bogus: 1}\n", "unknown apply properties bogus"},
		{"apply ensure absent", "ccm:\n  resources:\n    - apply:\n        - x.yaml: {ensure: absent}\n", "only knows present"},
		{"apply subscribe", "ccm:\n  resources:\n    - mark:\n        - a: {}\n    - apply:\n        - x.yaml: {subscribe: [mark#a]}\n", "does not accept subscribe"},
		{"goss health check", "ccm:\n  resources:\n    - mark:\n        - a: {}\n        - b:\n            health_checks: [{goss_rules: {process: {sshd: {running: true}}}}]\n", "mark#b: health_checks[0]: goss_rules checks are not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"m.yaml": tt.manifest})
			f := &fakePlugins{}
			_, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "m.yaml:") {
				t.Fatalf("error does not name the file and line: %v", err)
			}
			if len(f.names()) != 0 {
				t.Fatalf("resources ran despite a load error: %v", f.names())
			}
		})
	}
}

func TestSubscribeRefresh(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": `
ccm:
  resources:
    - mark:
        - quiet: {}
        - loud: {changed: true}
        - broken: {changed: true, fail: boom}
        - on-quiet: {subscribe: [mark#quiet]}
        - on-loud: {subscribe: [mark#quiet, mark#loud]}
        - on-broken: {subscribe: [mark#broken]}
        - on-missing: {subscribe: [mark#missing]}
`})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"on-quiet": false, "on-loud": true, "on-broken": false} {
		c, _ := f.call(name)
		if c.req.Refresh != want {
			t.Errorf("%s refresh = %v, want %v", name, c.req.Refresh, want)
		}
	}
	if e := event(t, res, "mark#on-loud"); !e.Refreshed || !e.Changed {
		t.Errorf("on-loud = %+v", e)
	}
	if e := event(t, res, "mark#on-missing"); !e.Failed || !strings.Contains(e.Error[0], "unknown subscription") {
		t.Errorf("on-missing = %+v", e)
	}
}

func TestControl(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": `
data: {enabled: true}
ccm:
  resources:
    - mark:
        - if-true: {control: {if: "Data.enabled"}}
        - if-false: {control: {if: "!Data.enabled"}}
        - unless-true: {control: {unless: "Data.enabled"}}
        - both: {control: {if: "true", unless: "false"}}
        - not-bool: {control: {if: "'yes'"}}
        - after: {}
`})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"if-true", "both", "after"}) {
		t.Fatalf("applied = %v", got)
	}
	if e := event(t, res, "mark#if-false"); !e.Skipped {
		t.Fatalf("if-false = %+v", e)
	}
	if e := event(t, res, "mark#not-bool"); !e.Failed {
		t.Fatalf("a non-boolean control must fail only that resource: %+v", e)
	}
}

func TestFailOnErrorSkipsTheRest(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": `
ccm:
  fail_on_error: true
  resources:
    - mark:
        - a: {}
        - b: {fail: boom}
        - c: {}
`})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("applied = %v", got)
	}
	if e := event(t, res, "mark#c"); !e.Skipped {
		t.Fatalf("c = %+v", e)
	}
}

func TestNoopAndModesReachThePlugin(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": "ccm:\n  resources:\n    - mark:\n        - a: {changed: true}\n"})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) { o.Noop = true })
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.call("a")
	if !c.req.Noop || c.caller.Mode != trust.ModeNoop {
		t.Fatalf("noop not passed: req.Noop=%v mode=%v", c.req.Noop, c.caller.Mode)
	}
	if e := event(t, res, "mark#a"); !e.Noop || !e.Changed || e.NoopMessage == "" {
		t.Fatalf("event = %+v", e)
	}
}

func TestHealthCheckOnly(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": `
ccm:
  resources:
    - mark:
        - checked:
            changed: true
            health_checks:
              - command: /bin/check --flag
        - unchecked: {changed: true}
`})
	f := &fakePlugins{exit: 2}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) { o.HealthCheckOnly = true })
	if err != nil {
		t.Fatal(err)
	}
	if len(f.names()) != 0 {
		t.Fatalf("health-check-only applied resources: %v", f.names())
	}
	e := event(t, res, "mark#checked")
	if !e.HealthCheckOnly || !e.Failed || len(e.HealthCheck) != 1 || e.HealthCheck[0].Status != session.HealthCritical {
		t.Fatalf("checked = %+v", e)
	}
	if e := event(t, res, "mark#unchecked"); e.Failed || e.Changed {
		t.Fatalf("unchecked should be quiet: %+v", e)
	}
	if len(f.execs) != 1 || !slices.Equal(f.execs[0].Argv, []string{"/bin/check", "--flag"}) || !f.execs[0].Probe {
		t.Fatalf("execs = %+v", f.execs)
	}
}
