package engine

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
)

// TestApplyLimitsOnlyLower checks that an apply's limits reach the callers
// of its child's resources, and that a deeper apply can lower them further
// but never raise them.
func TestApplyLimitsOnlyLower(t *testing.T) {
	dir := tree(t, map[string]string{
		"m.yaml": "ccm:\n  resources:\n    - mark:\n        - root: {}\n" +
			"    - apply:\n        - c.yaml:\n            limits: {call_timeout: 2s, output_bytes: 1MiB}\n",
		"c.yaml": "ccm:\n  resources:\n    - mark:\n        - child: {}\n" +
			"    - apply:\n        - g.yaml:\n            limits: {call_timeout: 1h, output_bytes: 1024, memory_mb: 64}\n",
		"g.yaml": "ccm:\n  resources:\n    - mark:\n        - grandchild: {}\n",
	})
	f := &fakePlugins{}
	if _, err := run(t, f, filepath.Join(dir, "m.yaml"), nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want trust.Limits
	}{
		{"root", trust.Limits{}},
		{"child", trust.Limits{CallTimeout: 2 * time.Second, OutputBytes: 1 << 20}},
		{"grandchild", trust.Limits{CallTimeout: 2 * time.Second, OutputBytes: 1024, MemoryBytes: 64 << 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := f.call(tc.name)
			if !ok {
				t.Fatalf("%s did not run", tc.name)
			}
			if c.caller.Limits != tc.want {
				t.Fatalf("limits = %+v, want %+v", c.caller.Limits, tc.want)
			}
		})
	}
}

func TestApplyLimitsRejected(t *testing.T) {
	tests := []struct {
		name, limits, want string
	}{
		{"unknown", "{cpu: 1}", "limits.cpu: unknown limit"},
		{"bad duration", "{call_timeout: soon}", `limits.call_timeout: "soon" is not a positive duration`},
		{"not a map", "5", "limits must be a map"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, map[string]string{
				"m.yaml": "ccm:\n  resources:\n    - apply:\n        - c.yaml:\n            limits: " + tc.limits + "\n",
				"c.yaml": "ccm:\n  resources:\n    - mark:\n        - child: {}\n",
			})
			f := &fakePlugins{}
			_, err := run(t, f, filepath.Join(dir, "m.yaml"), nil)
			if err == nil || !strings.Contains(err.Error(), "m.yaml:4: apply#c.yaml: "+tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if len(f.calls) > 0 {
				t.Fatal("a resource ran")
			}
		})
	}
}
