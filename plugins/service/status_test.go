package main

import (
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestStatusStateTables runs every is-active and is-enabled word of
// docs/service.md through Status on a read-only host.
func TestStatusStateTables(t *testing.T) {
	cases := []struct {
		name    string
		unit    unit
		running bool
		enabled bool
	}{
		{"active", unit{"active", "enabled"}, true, true},
		{"inactive", unit{"inactive", "enabled"}, false, true},
		{"failed", unit{"failed", "enabled"}, false, true},
		{"activating", unit{"activating", "enabled"}, false, true},
		{"enabled-runtime", unit{"active", "enabled-runtime"}, true, true},
		{"alias", unit{"active", "alias"}, true, true},
		{"static", unit{"active", "static"}, true, true},
		{"indirect", unit{"active", "indirect"}, true, true},
		{"generated", unit{"active", "generated"}, true, true},
		{"transient", unit{"active", "transient"}, true, true},
		{"disabled", unit{"active", "disabled"}, true, false},
		{"linked", unit{"active", "linked"}, true, false},
		{"linked-runtime", unit{"active", "linked-runtime"}, true, false},
		{"masked", unit{"inactive", "masked"}, false, false},
		{"masked-runtime", unit{"inactive", "masked-runtime"}, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.unit
			h := newSystemd(t, map[string]*unit{"getty@tty1": &u})
			h.readOnly = true
			resp := (&serviceType{}).Status(h, abi.Request{Type: typeName, Name: "getty@tty1", Properties: map[string]any{"name": "getty@tty1"}})
			if resp.Error != "" {
				t.Fatal(resp.Error)
			}
			meta := resp.State["metadata"].(map[string]any)
			if meta["running"] != tc.running || meta["enabled"] != tc.enabled || meta["name"] != "getty@tty1" || resp.Provider != providerSystemd {
				t.Fatalf("status %+v", resp)
			}
			if want := map[bool]string{true: "running", false: "stopped"}[tc.running]; resp.FinalEnsure != want || resp.State["ensure"] != want {
				t.Fatalf("final ensure %q, want %q", resp.FinalEnsure, want)
			}
			if len(h.mutations()) != 0 {
				t.Fatalf("status mutated: %q", h.calls)
			}
		})
	}
}

func TestStatusErrors(t *testing.T) {
	cases := []struct {
		name  string
		units map[string]*unit
		req   abi.Request
		want  string
	}{
		{"unknown unit", map[string]*unit{}, abi.Request{Name: "app", Properties: map[string]any{"name": "app"}}, "unit app not found"},
		{"reloading is not a table state", map[string]*unit{"app": {"reloading", "enabled"}}, abi.Request{Name: "app", Properties: map[string]any{"name": "app"}}, `said "reloading"`},
		{"invalid properties", map[string]*unit{}, abi.Request{Name: "a b", Properties: map[string]any{"name": "a b"}}, `invalid properties: name "a b"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newSystemd(t, tc.units)
			h.readOnly = true
			wantError(t, (&serviceType{}).Status(h, tc.req).Error, tc.want)
		})
	}
}
