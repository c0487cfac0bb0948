package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/trust"
)

func TestApplyPathsResolvePerLevel(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml":                 "ccm:\n  resources:\n    - apply:\n        - sub/m.yaml: {}\n    - apply:\n        - other.yaml: {}\n",
		"sub/m.yaml":             "ccm:\n  resources:\n    - apply:\n        - lib/m.yaml: {}\n",
		"sub/lib/m.yaml":         "ccm:\n  resources:\n    - mark:\n        - deep: {}\n",
		"other.yaml":             "ccm:\n  resources:\n    - mark:\n        - sibling: {}\n",
		"sub/other.yaml":         "ccm:\n  resources:\n    - mark:\n        - wrong-dir: {}\n",
		"sub/lib/lib/other.yaml": "ccm:\n  resources:\n    - mark:\n        - wrong-dir: {}\n",
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"deep", "sibling"}) {
		t.Fatalf("applied = %v (events %v)", got, refs(res))
	}
	c, _ := f.call("deep")
	if c.req.WorkingDir != filepath.Join(dir, "sub", "lib") {
		t.Fatalf("working dir = %s", c.req.WorkingDir)
	}
	c, _ = f.call("sibling")
	if c.req.WorkingDir != dir {
		t.Fatalf("working dir did not revert: %s", c.req.WorkingDir)
	}
}

func TestApplyModesOnlyStrengthen(t *testing.T) {
	tests := []struct {
		name       string
		parentNoop bool
		childNoop  bool
		want       bool
	}{
		{"neither", false, false, false},
		{"child only", false, true, true},
		{"parent only", true, false, true},
		{"both", true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{
				"m.yaml": fmt.Sprintf("ccm:\n  resources:\n    - apply:\n        - c.yaml: {noop: %v}\n", tt.childNoop),
				"c.yaml": "ccm:\n  resources:\n    - apply:\n        - g.yaml: {noop: false}\n",
				"g.yaml": "ccm:\n  resources:\n    - mark:\n        - leaf: {changed: true}\n",
			})
			f := &fakePlugins{}
			if _, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) { o.Noop = tt.parentNoop }); err != nil {
				t.Fatal(err)
			}
			c, _ := f.call("leaf")
			if c.req.Noop != tt.want || (c.caller.Mode == trust.ModeNoop) != tt.want {
				t.Fatalf("grandchild noop = %v mode %v, want %v", c.req.Noop, c.caller.Mode, tt.want)
			}
		})
	}
}

func TestApplyDepthLimit(t *testing.T) {
	// level i applies level i+1; the last one marks.
	build := func(levels int) map[string]string {
		files := map[string]string{}
		for i := 0; i < levels; i++ {
			files[fmt.Sprintf("l%d.yaml", i)] = fmt.Sprintf("ccm:\n  resources:\n    - apply:\n        - l%d.yaml: {}\n", i+1)
		}
		files[fmt.Sprintf("l%d.yaml", levels)] = "ccm:\n  resources:\n    - mark:\n        - bottom: {}\n"
		return files
	}
	t.Run("ten levels work", func(t *testing.T) {
		f := &fakePlugins{}
		res, err := run(t, f, filepath.Join(tree(t, build(10)), "l0.yaml"), nil)
		if err != nil || res.Failed() || len(f.names()) != 1 {
			t.Fatalf("err=%v failed=%v applied=%v", err, res.Failed(), f.names())
		}
	})
	t.Run("eleventh fails", func(t *testing.T) {
		f := &fakePlugins{}
		res, err := run(t, f, filepath.Join(tree(t, build(11)), "l0.yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.names()) != 0 || !res.Failed() {
			t.Fatalf("applied=%v failed=%v", f.names(), res.Failed())
		}
		if e := event(t, res, "apply#l11.yaml"); !strings.Contains(e.Error[0], "maximum apply depth of 10 exceeded") {
			t.Fatalf("l11 = %+v", e)
		}
	})
	t.Run("self apply ends fast", func(t *testing.T) {
		dir := tree(t, map[string]string{"m.yaml": "ccm:\n  resources:\n    - mark:\n        - here: {}\n    - apply:\n        - m.yaml: {}\n"})
		f := &fakePlugins{}
		start := time.Now()
		res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		// The manifest is its own ancestor: a cycle error at once, not
		// eleven levels of recursion (budget.go).
		if len(f.names()) != 1 || res.Summary.Failed != 1 {
			t.Fatalf("applied %d, failed %d; want 1 and 1", len(f.names()), res.Summary.Failed)
		}
		if e := event(t, res, "apply#m.yaml"); !strings.Contains(e.Error[0], "apply cycle: m.yaml is already being applied (m.yaml applies m.yaml)") {
			t.Fatalf("apply#m.yaml = %+v", e.Error)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %s", d)
		}
	})
}

func TestApplyAllowApply(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml":      "ccm:\n  resources:\n    - apply:\n        - nested.yaml: {allow_apply: false}\n    - apply:\n        - flat.yaml: {allow_apply: false}\n",
		"nested.yaml": "ccm:\n  resources:\n    - mark:\n        - before-nested: {}\n    - apply:\n        - flat.yaml: {}\n",
		"flat.yaml":   "ccm:\n  resources:\n    - mark:\n        - flat: {}\n",
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"flat"}) {
		t.Fatalf("applied = %v; no resource of the refused child may run", got)
	}
	if e := event(t, res, "apply#nested.yaml"); !e.Failed || !strings.Contains(e.Error[0], "allow_apply: false") {
		t.Fatalf("nested = %+v", e)
	}
}

func TestApplyData(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": `
data: {secret: parent-only, port: 1}
ccm:
  resources:
    - apply:
        - c.yaml:
            data: {port: "{{ Data.port }}", level: info}
`,
		"c.yaml": `
data: {port: 80, level: debug, own: kept}
ccm:
  resources:
    - mark:
        - m: {value: "{{ Data.port }}/{{ Data.level }}/{{ Data.own }}/{{ lookup('data.secret', 'hidden') }}/{{ Data.cli }}"}
`,
	})
	f := &fakePlugins{}
	_, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) {
		o.ExternalData = map[string]any{"level": "cli-wins", "cli": "yes"}
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.call("m")
	if got := c.req.Properties["value"]; got != "1/cli-wins/kept/hidden/yes" {
		t.Fatalf("value = %v", got)
	}
}

func TestApplyEventAndSubscriptions(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": `
ccm:
  resources:
    - mark:
        - parent-change: {changed: true}
    - apply:
        - quiet.yaml: {}
    - apply:
        - loud.yaml: {}
    - mark:
        - on-quiet: {subscribe: [apply#quiet.yaml]}
        - on-loud: {subscribe: [apply#loud.yaml]}
        - on-child-resource: {subscribe: [mark#child-change]}
`,
		"quiet.yaml": "ccm:\n  resources:\n    - mark:\n        - q: {}\n",
		"loud.yaml":  "ccm:\n  resources:\n    - mark:\n        - child-change: {changed: true}\n        - sees-parent: {subscribe: [mark#parent-change]}\n",
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"on-quiet": false, "on-loud": true, "on-child-resource": true, "sees-parent": true} {
		if c, _ := f.call(name); c.req.Refresh != want {
			t.Errorf("%s refresh = %v, want %v", name, c.req.Refresh, want)
		}
	}
	if e := event(t, res, "apply#loud.yaml"); !e.Changed || e.Failed {
		t.Errorf("apply#loud = %+v", e)
	}
	if res.Summary.Total != 9 {
		t.Errorf("total = %d, want 9 (every resource of the tree once, apply resources included)", res.Summary.Total)
	}
}

func TestApplyFailure(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": `
ccm:
  fail_on_error: true
  resources:
    - apply:
        - bad.yaml: {}
    - mark:
        - never: {}
`,
		"bad.yaml": "ccm:\n  resources:\n    - mark:\n        - x: {fail: boom}\n        - y: {changed: true}\n",
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	e := event(t, res, "apply#bad.yaml")
	if !e.Failed || e.Changed || !strings.Contains(e.Error[0], "had 1 failed resources") {
		t.Fatalf("apply = %+v", e)
	}
	if slices.Contains(f.names(), "never") {
		t.Fatal("fail_on_error did not stop the parent")
	}
}

func TestApplyMissingOrBrokenChild(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml":      "ccm:\n  resources:\n    - apply:\n        - missing.yaml: {}\n    - apply:\n        - broken.yaml: {}\n    - mark:\n        - after: {}\n",
		"broken.yaml": "ccm:\n  resources:\n    - mark:\n        - first: {}\n        - second: {nope: 1}\n",
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"after"}) {
		t.Fatalf("applied = %v", got)
	}
	if e := event(t, res, "apply#broken.yaml"); !strings.Contains(e.Error[0], "broken.yaml:") {
		t.Fatalf("error should name the child file and line: %v", e.Error)
	}
}

func TestApplyOwnHealthChecks(t *testing.T) {
	tests := []struct {
		name        string
		exit        int
		monitorOnly bool
		child       string
		wantStatus  string // "" = no check ran
		wantFailed  bool
	}{
		{"ok after the child", 0, false, "- mark:\n        - c: {changed: true}", session.HealthOK, false},
		{"critical fails the apply", 2, false, "- mark:\n        - c: {changed: true}", session.HealthCritical, true},
		{"warning does not fail", 1, false, "- mark:\n        - c: {}", session.HealthWarning, false},
		{"runs in health check mode", 0, true, "- mark:\n        - c: {}", session.HealthOK, false},
		{"not after a failed child", 0, false, "- mark:\n        - c: {fail: boom}", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{
				"m.yaml": "ccm:\n  resources:\n    - apply:\n        - c.yaml:\n            health_checks:\n              - command: /bin/check\n",
				"c.yaml": "ccm:\n  resources:\n    " + tt.child + "\n",
			})
			f := &fakePlugins{exit: tt.exit}
			res, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) { o.HealthCheckOnly = tt.monitorOnly })
			if err != nil {
				t.Fatal(err)
			}
			e := event(t, res, "apply#c.yaml")
			var got string
			if len(e.HealthCheck) == 1 {
				got = e.HealthCheck[0].Status
			}
			if got != tt.wantStatus || e.Failed != tt.wantFailed {
				t.Fatalf("apply check = %q failed = %v, want %q and %v (event %+v)", got, e.Failed, tt.wantStatus, tt.wantFailed, e)
			}
			if tt.wantStatus != "" && (len(f.execs) != 1 || !f.execs[0].Probe) {
				t.Fatalf("execs = %+v", f.execs)
			}
		})
	}
}

func TestApplyNoopChildFiresOnlyNoopSubscribers(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": `
ccm:
  resources:
    - apply:
        - quiet.yaml: {noop: true}
    - mark:
        - on-apply: {subscribe: [apply#quiet.yaml]}
        - on-resource: {subscribe: [mark#would-change]}
    - apply:
        - also-quiet.yaml: {noop: true}
`,
		"quiet.yaml":      "ccm:\n  resources:\n    - mark:\n        - would-change: {changed: true}\n",
		"also-quiet.yaml": "ccm:\n  resources:\n    - mark:\n        - noop-subscriber: {subscribe: [mark#would-change]}\n",
	})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"on-apply": false, "on-resource": false, "noop-subscriber": true} {
		if c, _ := f.call(name); c.req.Refresh != want {
			t.Errorf("%s refresh = %v, want %v", name, c.req.Refresh, want)
		}
	}
	if e := event(t, res, "apply#quiet.yaml"); !e.Changed || !e.Noop {
		t.Errorf("the noop apply still reports the change it would make: %+v", e)
	}
}
