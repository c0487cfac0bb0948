package main

import (
	"slices"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// decisionRow is one case of the decision table of docs/service.md, run
// twice: in noop on a read-only host (same decision, only probes) and for
// real (the mutations, then the unit in its target state).
type decisionRow struct {
	name      string
	start     unit           // the unit "app" before the run
	props     map[string]any // besides name; ensure defaults to running
	refresh   bool
	noop      string   // expected noop message; "" = nothing to do
	verbs     []string // expected mutations of the real run, daemon-reload excluded
	refreshed bool
}

var (
	on  = unit{active: "active", enabled: "enabled"}
	off = unit{active: "inactive", enabled: "disabled"}
)

func decisionRows() []decisionRow {
	stopped := map[string]any{"ensure": "stopped"}
	return []decisionRow{
		{name: "running and running: nothing", start: on},
		{name: "running and running, refresh: restart", start: on, refresh: true, noop: "Would have restarted via subscribe", verbs: []string{"restart"}, refreshed: true},
		{name: "running and inactive: start", start: off, noop: "Would have started", verbs: []string{"start"}},
		{name: "running and failed: start", start: unit{active: "failed", enabled: "enabled"}, noop: "Would have started", verbs: []string{"start"}},
		{name: "running and activating: start", start: unit{active: "activating", enabled: "enabled"}, noop: "Would have started", verbs: []string{"start"}},
		{name: "running and inactive, refresh: start satisfies it", start: off, refresh: true, noop: "Would have started", verbs: []string{"start"}},
		{name: "stopped and running: stop", start: on, props: stopped, noop: "Would have stopped", verbs: []string{"stop"}},
		{name: "stopped and running, refresh: stop, subscription ignored", start: on, props: stopped, refresh: true, noop: "Would have stopped", verbs: []string{"stop"}},
		{name: "stopped and stopped, refresh: nothing", start: off, props: stopped, refresh: true},
		{name: "enable true and disabled: enable only", start: unit{active: "active", enabled: "disabled"}, props: map[string]any{"enable": true}, noop: "Would have enabled", verbs: []string{"enable"}},
		{name: "enable false and enabled: disable only", start: on, props: map[string]any{"enable": false}, noop: "Would have disabled", verbs: []string{"disable"}},
		{name: "enable true and static: nothing", start: unit{active: "active", enabled: "static"}, props: map[string]any{"enable": true}},
		{name: "enable false and masked: nothing", start: unit{active: "inactive", enabled: "masked"}, props: map[string]any{"ensure": "stopped", "enable": false}},
		{name: "enable unset and disabled: left alone", start: unit{active: "active", enabled: "disabled"}},
		{name: "enable unset and enabled, stopped: left alone", start: on, props: stopped, noop: "Would have stopped", verbs: []string{"stop"}},
		{
			name: "start then enable", start: off, props: map[string]any{"enable": true},
			noop: "Would have started, Would have enabled", verbs: []string{"start", "enable"},
		},
		{
			name: "stop then disable", start: on, props: map[string]any{"ensure": "stopped", "enable": false},
			noop: "Would have stopped, Would have disabled", verbs: []string{"stop", "disable"},
		},
		{
			name: "restart then enable", start: unit{active: "active", enabled: "disabled"}, props: map[string]any{"enable": true}, refresh: true,
			noop: "Would have restarted via subscribe, Would have enabled", verbs: []string{"restart", "enable"}, refreshed: true,
		},
	}
}

func request(name string, props map[string]any, refresh, noop bool) abi.Request {
	p := map[string]any{"name": name, "ensure": "running"}
	for k, v := range props {
		p[k] = v
	}
	return abi.Request{Type: typeName, Name: name, Properties: p, Refresh: refresh, Noop: noop}
}

func TestApplyDecisionTable(t *testing.T) {
	for _, row := range decisionRows() {
		t.Run(row.name, func(t *testing.T) {
			want := spec{name: "app", ensure: ensureRunning}
			if e, ok := row.props["ensure"].(string); ok {
				want.ensure = e
			}
			t.Run("noop", func(t *testing.T) {
				start := row.start
				h := newSystemd(t, map[string]*unit{"app": &start})
				h.readOnly = true
				res := (&serviceType{}).Apply(h, request("app", row.props, row.refresh, true))
				if res.Error != "" {
					t.Fatalf("noop failed: %s (calls %q)", res.Error, h.calls)
				}
				if got := h.mutations(); len(got) != 0 {
					t.Fatalf("noop attempted mutations %q", got)
				}
				if res.Changed != (row.noop != "") || res.NoopMessage != row.noop || res.Refreshed != row.refreshed {
					t.Fatalf("noop: %+v; want message %q refreshed %v", res, row.noop, row.refreshed)
				}
				if start != row.start {
					t.Fatalf("noop changed the unit to %+v", start)
				}
				wantObserved(t, res, row.start)
			})
			t.Run("apply", func(t *testing.T) {
				start := row.start
				h := newSystemd(t, map[string]*unit{"app": &start})
				res := (&serviceType{}).Apply(h, request("app", row.props, row.refresh, false))
				if res.Error != "" {
					t.Fatalf("apply failed: %s (calls %q)", res.Error, h.calls)
				}
				wantVerbs := []string(nil)
				if len(row.verbs) > 0 {
					wantVerbs = []string{"daemon-reload"}
					for _, v := range row.verbs {
						wantVerbs = append(wantVerbs, v+" app")
					}
				}
				if got := h.mutations(); !slices.Equal(got, wantVerbs) {
					t.Fatalf("mutations %q, want %q", got, wantVerbs)
				}
				if res.Changed != (len(row.verbs) > 0) || res.Refreshed != row.refreshed || res.NoopMessage != "" {
					t.Fatalf("apply: %+v; want changed %v refreshed %v", res, len(row.verbs) > 0, row.refreshed)
				}
				if res.FinalEnsure != want.ensure || (start.active == "active") != (want.ensure == ensureRunning) {
					t.Fatalf("final ensure %q, unit %+v; want %s", res.FinalEnsure, start, want.ensure)
				}
				if e, ok := row.props["enable"].(bool); ok && enabledStates[start.enabled] != e {
					t.Fatalf("unit %+v, want enabled %v", start, e)
				}
				wantObserved(t, res, start)
			})
		})
	}
}

// wantObserved checks final_ensure and the state document against a unit.
func wantObserved(t *testing.T, res abi.Result, u unit) {
	t.Helper()
	running := u.active == "active"
	wantEnsure := ensureStopped
	if running {
		wantEnsure = ensureRunning
	}
	meta, _ := res.State["metadata"].(map[string]any)
	if res.FinalEnsure != wantEnsure || res.Provider != providerSystemd ||
		res.State["protocol"] != stateProtocol || res.State["ensure"] != wantEnsure ||
		meta["name"] != "app" || meta["provider"] != providerSystemd ||
		meta["running"] != running || meta["enabled"] != enabledStates[u.enabled] {
		t.Fatalf("result %+v does not describe unit %+v", res, u)
	}
}

func TestDaemonReloadOncePerInstance(t *testing.T) {
	units := map[string]*unit{"a": {"inactive", "enabled"}, "b": {"active", "enabled"}, "c": {"inactive", "enabled"}, "d": {"active", "enabled"}}
	h := newSystemd(t, units)
	svc := &serviceType{}
	steps := []struct {
		name  string
		props map[string]any
	}{
		{"b", nil}, // nothing to do: no reload yet
		{"a", nil},
		{"c", nil},
		{"d", map[string]any{"ensure": "stopped"}},
	}
	for _, s := range steps {
		if res := svc.Apply(h, request(s.name, s.props, false, false)); res.Error != "" {
			t.Fatalf("%s: %s", s.name, res.Error)
		}
	}
	want := []string{"daemon-reload", "start a", "start c", "stop d"}
	if got := h.mutations(); !slices.Equal(got, want) {
		t.Fatalf("mutations %q, want %q", got, want)
	}
}

func TestFailedDaemonReloadIsRetried(t *testing.T) {
	h := newSystemd(t, map[string]*unit{"a": {"inactive", "enabled"}, "b": {"inactive", "enabled"}})
	h.fail["daemon-reload"] = 1
	svc := &serviceType{}
	res := svc.Apply(h, request("a", nil, false, false))
	wantError(t, res.Error, "reloading systemd before changing the unit: systemctl daemon-reload exited 1")
	if res.Changed || !slices.Contains(res.Messages, "daemon-reload failed") {
		t.Fatalf("result %+v", res)
	}
	delete(h.fail, "daemon-reload")
	if res := svc.Apply(h, request("b", nil, false, false)); res.Error != "" || !res.Changed {
		t.Fatalf("second resource: %+v", res)
	}
	want := []string{"daemon-reload", "daemon-reload", "start b"}
	if got := h.mutations(); !slices.Equal(got, want) {
		t.Fatalf("mutations %q, want %q", got, want)
	}
}
