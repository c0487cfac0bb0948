package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestApplyFailures(t *testing.T) {
	cases := []struct {
		name     string
		unit     *unit // nil: the unit does not exist
		props    map[string]any
		setup    func(h *systemd)
		want     string
		messages []string
		changed  bool
	}{
		{
			name: "start fails with its stderr in messages",
			unit: &unit{"inactive", "enabled"}, setup: func(h *systemd) { h.fail["start"] = 1 },
			want: "systemctl start app exited 1", messages: []string{"Job for app failed.", "start failed"},
		},
		{
			name: "enable fails after a completed start",
			unit: &unit{"inactive", "disabled"}, props: map[string]any{"enable": true}, setup: func(h *systemd) { h.fail["enable"] = 1 },
			want: "systemctl enable app exited 1", messages: []string{"ran systemctl start app", "Job for app failed.", "enable failed"},
		},
		{
			name: "stop times out",
			unit: &unit{"active", "enabled"}, props: map[string]any{"ensure": "stopped"}, setup: func(h *systemd) { h.timeout["stop"] = true },
			want: "systemctl stop app timed out after 2m0s; its process group was killed",
		},
		{
			name: "start exits 0 but the unit stays down",
			unit: &unit{"inactive", "enabled"}, setup: func(h *systemd) { h.stuck = true },
			want: "failed to reach desired state: unit app is stopped, want running", changed: true,
			messages: []string{"ran systemctl start app"},
		},
		{
			name: "unit not found",
			want: "unit app not found by systemctl is-enabled (exit 1; stderr: Failed to get unit file state for app.service: No such file or directory): install it or fix the name",
		},
		{
			name: "is-active says deactivating",
			unit: &unit{"deactivating", "enabled"},
			want: `systemctl is-active app said "deactivating" (exit 3); expected active, inactive, failed or activating`,
		},
		{
			name: "is-enabled says bad",
			unit: &unit{"active", "bad"},
			want: `systemctl is-enabled app said "bad" (exit 3), which is neither an enabled nor a disabled state`,
		},
		{
			name:  "is-active times out",
			unit:  &unit{"active", "enabled"},
			setup: func(h *systemd) { h.timeout["is-active"] = true },
			want:  "systemctl is-active app timed out after 30s",
		},
		{
			name: "systemctl missing",
			unit: &unit{"active", "enabled"},
			setup: func(h *systemd) {
				h.execErr = &abi.CallError{Code: abi.CodeNotFound, Message: "executable \"systemctl\" not found"}
			},
			want: `running systemctl is-active app: not_found`,
		},
		{
			name: "systemd is not running",
			unit: &unit{"", ""},
			setup: func(h *systemd) {
				h.notBooted = true
				h.fail["is-active"] = 1
			},
			want: `systemd is not running on this host (/run/systemd/system is missing), so unit app cannot be managed`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			units := map[string]*unit{}
			if tc.unit != nil {
				units["app"] = tc.unit
			}
			h := newSystemd(t, units)
			if tc.setup != nil {
				tc.setup(h)
			}
			res := (&serviceType{}).Apply(h, request("app", tc.props, false, false))
			wantError(t, res.Error, tc.want)
			if res.Changed != tc.changed || !slices.Equal(res.Messages, tc.messages) {
				t.Fatalf("changed %v messages %q; want %v %q", res.Changed, res.Messages, tc.changed, tc.messages)
			}
		})
	}
}

func TestApplyInvalidMakesNoCalls(t *testing.T) {
	h := newSystemd(t, map[string]*unit{"app": {"inactive", "enabled"}})
	res := (&serviceType{}).Apply(h, request("app", map[string]any{"enable": "yes"}, false, false))
	wantError(t, res.Error, `invalid properties: property "enable" must be a boolean, got a string`)
	if len(h.calls) != 0 {
		t.Fatalf("calls %q", h.calls)
	}
}

func wantError(t *testing.T, got, want string) {
	t.Helper()
	if want == "" {
		if got != "" {
			t.Fatalf("unexpected error %q", got)
		}
		return
	}
	if !strings.Contains(got, want) {
		t.Fatalf("error %q, want it to contain %q", got, want)
	}
}
