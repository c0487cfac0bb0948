package engine

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBatching(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		noop     bool
		batches  []int
		applied  []string
	}{
		{
			name:     "independent resources share one call",
			manifest: "ccm:\n  resources:\n    - mark:\n        - a: {}\n        - b: {}\n        - c: {}\n",
			batches:  []int{3},
			applied:  []string{"a", "b", "c"},
		},
		{
			name:     "a require on a member cuts the run",
			manifest: "ccm:\n  resources:\n    - mark:\n        - a: {}\n        - b: {}\n        - c: {require: [mark#a]}\n        - d: {}\n",
			batches:  []int{2, 2},
			applied:  []string{"a", "b", "c", "d"},
		},
		{
			name:     "a subscribe on a member's alias cuts the run",
			manifest: "ccm:\n  resources:\n    - mark:\n        - a: {alias: first}\n        - b: {subscribe: [mark#first]}\n",
			batches:  nil,
			applied:  []string{"a", "b"},
		},
		{
			name:     "health checks run right after their resource",
			manifest: "ccm:\n  resources:\n    - mark:\n        - a: {}\n        - b: {}\n        - c: {health_checks: [{command: /bin/true}]}\n        - d: {}\n        - e: {}\n",
			batches:  []int{2, 2},
			applied:  []string{"a", "b", "c", "d", "e"},
		},
		{
			name:     "control-skipped members keep their place",
			manifest: "ccm:\n  resources:\n    - mark:\n        - a: {}\n        - b: {control: {if: \"false\"}}\n        - c: {}\n",
			batches:  []int{2},
			applied:  []string{"a", "c"},
		},
		{
			name:     "noop goes one by one",
			manifest: "ccm:\n  resources:\n    - mark:\n        - a: {}\n        - b: {}\n",
			noop:     true,
			batches:  nil,
			applied:  []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"m.yaml": tt.manifest})
			f := &fakePlugins{}
			res, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) { o.Noop = tt.noop })
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.batches, tt.batches) {
				t.Errorf("batches = %v, want %v", f.batches, tt.batches)
			}
			if got := f.names(); !slices.Equal(got, tt.applied) {
				t.Errorf("applied = %v, want %v", got, tt.applied)
			}
			var order []string
			for _, e := range res.Events {
				order = append(order, e.Name)
			}
			if !slices.IsSorted(order) {
				t.Errorf("events out of declaration order: %v", order)
			}
		})
	}
}

func TestBatchFailOnError(t *testing.T) {
	dir := tree(t, map[string]string{"m.yaml": `
ccm:
  fail_on_error: true
  resources:
    - mark:
        - a: {}
        - b: {fail: boom}
        - c: {}
    - mark:
        - d: {}
`})
	f := &fakePlugins{}
	res, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("applied = %v", got)
	}
	for _, ref := range []string{"mark#c", "mark#d"} {
		e := event(t, res, ref)
		if !e.Skipped || len(e.Messages) == 0 || !strings.Contains(e.Messages[0], "mark#b failed") {
			t.Errorf("%s = %+v", ref, e)
		}
	}
	if res.Summary.Total != 4 || res.Summary.Failed != 1 || res.Summary.Skipped != 2 {
		t.Errorf("summary = %+v", res.Summary)
	}
}

// TestHandles: a resource's apply request carries the handle its plugin
// returned when it validated exactly the request's properties, once: the
// load-time validation's for a resource with nothing deferred, the
// apply-time validation's for one whose deferred template was expanded
// (never the load-time one, which validated it without that field), in a
// batch and one by one (noop); a skipped resource's handle is never sent.
func TestHandles(t *testing.T) {
	manifest := `
data:
  who: world
ccm:
  resources:
    - mark:
        - a: {value: x}
        - b: {later: "{{ Data.who }}!"}
        - c: {control: {if: "false"}}
        - d: {later: plain}
`
	for _, noop := range []bool{false, true} {
		t.Run(map[bool]string{false: "apply", true: "noop"}[noop], func(t *testing.T) {
			dir := tree(t, map[string]string{"m.yaml": manifest})
			f := &fakePlugins{}
			if _, err := run(t, f, filepath.Join(dir, "m.yaml"), func(o *Options) { o.Noop = noop }); err != nil {
				t.Fatal(err)
			}
			if len(f.handleErrs) > 0 {
				t.Fatalf("handles misused: %v", f.handleErrs)
			}
			if got := f.names(); !slices.Equal(got, []string{"a", "b", "d"}) {
				t.Fatalf("applied = %v", got)
			}
			for _, name := range []string{"a", "b", "d"} {
				c, _ := f.call(name)
				if c.req.Handle == 0 {
					t.Errorf("%s applied without a handle", name)
				}
				if c.req.Properties == nil {
					t.Errorf("%s: the engine must send the properties with the handle (the host decides)", name)
				}
			}
			if b, _ := f.call("b"); b.req.Properties["later"] != "world!" {
				t.Errorf("b applied with %v", b.req.Properties)
			}
			// a, b's load-time validation (later left out), c, d, b's
			// apply-time validation: 5 handles, 3 used, 2 left (b's first
			// and c's).
			if f.lastHandle != 5 || len(f.validated) != 2 {
				t.Errorf("handles made %d, left %d; want 5, 2", f.lastHandle, len(f.validated))
			}
			if f.forgot != 1 {
				t.Errorf("ForgetHandles called %d times at the end of the run, want 1", f.forgot)
			}
		})
	}
}
