package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// TestServiceThroughTheBinary loads the service plugin through the real host.
// Its decisions are tested natively against a simulated systemd
// (plugins/service); here: validation at load, and a noop run that may only
// ask systemctl read-only questions (this machine has no systemd as PID 1, so
// the answer is an error naming systemctl's complaint, never a change).
func TestServiceThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	writeManifest(t, dir, "bad.yaml", "ccm:\n  resources:\n    - service:\n        - \"bad name\": {}\n        - sshd: {ensure: restarted}\n")
	res := ccmtest.Run(t, dir, nil, "apply", "bad.yaml")
	if res.Code != 2 || !strings.Contains(res.Stderr, "service#bad name") || !strings.Contains(res.Stderr, "service#sshd") {
		t.Fatalf("exit %d, stderr %q: want 2 naming both resources", res.Code, res.Stderr)
	}

	writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - service:\n        - ccm-test-unit@x: {ensure: running, enable: true}\n")
	out, res := applyJSON(t, dir, "m.yaml", "--noop")
	if res.Code != 0 && res.Code != 1 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	e := out.event(t, "service#ccm-test-unit@x")
	if e.Provider != "systemd" || !e.Noop {
		t.Fatalf("event = %+v", e)
	}
	if e.Failed && !strings.Contains(strings.Join(e.Error, " "), "systemctl") {
		t.Fatalf("a failure must name systemctl: %v", e.Error)
	}
	// Without systemd as PID 1 the failure says so first (issue 11).
	if _, err := os.Stat("/run/systemd/system"); os.IsNotExist(err) {
		if !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "systemd is not running on this host") {
			t.Fatalf("without systemd: failed=%v errors %q, want \"systemd is not running on this host\"", e.Failed, e.Error)
		}
	}
}

// applyJSONEnv is applyJSON with extra environment.
func applyJSONEnv(t *testing.T, dir string, env []string, args ...string) (runOutput, ccmtest.Result) {
	t.Helper()
	res := ccmtest.Run(t, dir, env, append([]string{"apply", "--json"}, args...)...)
	var out runOutput
	if res.Code == 0 || res.Code == 1 {
		if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
			t.Fatalf("decoding --json output: %v\nstdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
		}
	}
	return out, res
}

// mutatingCalls are the fake systemctl's logged calls other than the two
// read-only probes.
func mutatingCalls(calls []string) []string {
	var m []string
	for _, c := range calls {
		if !strings.HasPrefix(c, "is-active ") && !strings.HasPrefix(c, "is-enabled ") {
			m = append(m, c)
		}
	}
	return m
}

// TestServiceFakeSystemctl drives the service plugin through the binary
// against testdata/fakes/systemctl (the ccm_testhooks exec redirect): every
// row is one apply of one manifest against a fresh unit state, checked by
// the event, the fake's call log and the unit's final state.
func TestServiceFakeSystemctl(t *testing.T) {
	t.Parallel()
	const unit = "web.service"
	tests := []struct {
		name     string
		state    string // "ACTIVE ENABLED"
		props    string
		noop     bool
		files    map[string]string // extra fake state files (fail-start, stuck)
		code     int
		changed  bool
		failed   bool
		final    string
		mutating []string
		after    string // the unit's state after the run
		errHas   string
		msgHas   string
		noopMsg  string
	}{
		{name: "start and enable", state: "inactive disabled", props: "{ensure: running, enable: true}",
			changed: true, final: "running", after: "active enabled",
			mutating: []string{"daemon-reload --system", "start --system -- " + unit, "enable --system -- " + unit},
			msgHas:   "ran systemctl start " + unit},
		{name: "already running and enabled", state: "active enabled", props: "{ensure: running, enable: true}",
			final: "running", after: "active enabled"},
		{name: "enable unset leaves the enable axis alone", state: "inactive disabled", props: "{ensure: running}",
			changed: true, final: "running", after: "active disabled",
			mutating: []string{"daemon-reload --system", "start --system -- " + unit}},
		{name: "stop and disable", state: "active enabled", props: "{ensure: stopped, enable: false}",
			changed: true, final: "stopped", after: "inactive disabled",
			mutating: []string{"daemon-reload --system", "stop --system -- " + unit, "disable --system -- " + unit}},
		{name: "failed unit counts as stopped", state: "failed enabled", props: "{ensure: stopped}",
			final: "stopped", after: "failed enabled"},
		{name: "static counts as enabled", state: "active static", props: "{enable: true}",
			final: "running", after: "active static"},
		{name: "noop start makes no mutating call", state: "inactive disabled", props: "{ensure: running, enable: true}", noop: true,
			changed: true, final: "stopped", after: "inactive disabled", noopMsg: "Would have started, Would have enabled"},
		{name: "noop stop", state: "active enabled", props: "{ensure: stopped, enable: false}", noop: true,
			changed: true, final: "running", after: "active enabled", noopMsg: "Would have stopped, Would have disabled"},
		{name: "start fails", state: "inactive disabled", props: "{ensure: running}",
			files: map[string]string{unit + ".fail-start": "Job for web.service failed because the control process exited with error code."},
			code:  1, failed: true, after: "inactive disabled",
			mutating: []string{"daemon-reload --system", "start --system -- " + unit},
			errHas:   "systemctl start " + unit + " exited 1", msgHas: "Job for web.service failed"},
		{name: "enable fails after the start", state: "inactive disabled", props: "{ensure: running, enable: true}",
			files: map[string]string{unit + ".fail-enable": "Failed to enable unit: Access denied"},
			code:  1, failed: true, after: "active disabled",
			mutating: []string{"daemon-reload --system", "start --system -- " + unit, "enable --system -- " + unit},
			errHas:   "systemctl enable " + unit + " exited 1", msgHas: "Access denied"},
		{name: "daemon-reload fails", state: "inactive disabled", props: "{ensure: running}",
			files: map[string]string{"daemon-reload.fail": "Failed to reload daemon: Connection timed out"},
			code:  1, failed: true, after: "inactive disabled",
			mutating: []string{"daemon-reload --system"},
			errHas:   "reloading systemd before changing the unit", msgHas: "Connection timed out"},
		{name: "start without effect", state: "inactive disabled", props: "{ensure: running}",
			files: map[string]string{unit + ".stuck": ""},
			code:  1, failed: true, after: "inactive disabled",
			mutating: []string{"daemon-reload --system", "start --system -- " + unit},
			errHas:   "failed to reach desired state: unit " + unit + " is stopped, want running"},
		{name: "unknown unit", props: "{ensure: running}", code: 1, failed: true,
			errHas: "unit " + unit + " not found by systemctl is-enabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			units := map[string]string{}
			if tt.state != "" {
				units[unit] = tt.state
			}
			state, env := ccmtest.FakeSystemctl(t, units)
			for f, content := range tt.files {
				if err := os.WriteFile(filepath.Join(state, f), []byte(content+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - service:\n        - "+unit+": "+tt.props+"\n")
			args := []string{"m.yaml"}
			if tt.noop {
				args = append(args, "--noop")
			}
			out, res := applyJSONEnv(t, dir, env, args...)
			if res.Code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", res.Code, tt.code, res.Stdout, res.Stderr)
			}
			e := out.event(t, "service#"+unit)
			errs, msgs := strings.Join(e.Error, " / "), strings.Join(e.Messages, " / ")
			if e.Changed != tt.changed || e.Failed != tt.failed || e.Provider != "systemd" || e.Noop != tt.noop {
				t.Errorf("event changed %v failed %v provider %q noop %v, want %v %v systemd %v (error %q)",
					e.Changed, e.Failed, e.Provider, e.Noop, tt.changed, tt.failed, tt.noop, errs)
			}
			if tt.final != "" && e.FinalEnsure != tt.final {
				t.Errorf("final_ensure %q, want %q", e.FinalEnsure, tt.final)
			}
			if !strings.Contains(errs, tt.errHas) || (tt.errHas == "") != (errs == "") {
				t.Errorf("error %q, want it to contain %q", errs, tt.errHas)
			}
			if !strings.Contains(msgs, tt.msgHas) {
				t.Errorf("messages %q, want %q", msgs, tt.msgHas)
			}
			if e.NoopMessage != tt.noopMsg {
				t.Errorf("noop_message %q, want %q", e.NoopMessage, tt.noopMsg)
			}
			calls := ccmtest.Calls(t, state)
			if got := mutatingCalls(calls); strings.Join(got, "\n") != strings.Join(tt.mutating, "\n") {
				t.Errorf("mutating systemctl calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.mutating, "\n"))
			}
			if tt.state != "" && (len(calls) < 2 || calls[0] != "is-active --system -- "+unit || calls[1] != "is-enabled --system -- "+unit) {
				t.Errorf("calls %q: want the is-active and is-enabled probes first", calls)
			}
			if tt.after != "" {
				if got := fakeUnit(t, state, unit); got != tt.after {
					t.Errorf("unit state after the run %q, want %q", got, tt.after)
				}
			}
		})
	}
}

// fakeUnit is the fake's "ACTIVE ENABLED" of unit.
func fakeUnit(t *testing.T, state, unit string) string {
	t.Helper()
	var parts []string
	for _, ext := range []string{".active", ".enabled"} {
		b, err := os.ReadFile(filepath.Join(state, unit+ext))
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, strings.TrimSpace(string(b)))
	}
	return strings.Join(parts, " ")
}

// TestServiceFakeRefresh: a service restarts on a subscribed change only
// when it is ensured running and already running; a stopped one is started
// (the refresh is satisfied), an ensured-stopped one ignores it, and no
// change means no restart.
func TestServiceFakeRefresh(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		state     string
		ensure    string
		trigger   string // the exec's extra properties
		mutating  []string
		refreshed bool
		noop      bool
		noopMsg   string
	}{
		{name: "running restarts", state: "active enabled", ensure: "running",
			mutating: []string{"daemon-reload --system", "restart --system -- app"}, refreshed: true},
		{name: "stopped is started, not restarted", state: "inactive enabled", ensure: "running",
			mutating: []string{"daemon-reload --system", "start --system -- app"}},
		{name: "ensured stopped ignores the refresh", state: "inactive enabled", ensure: "stopped"},
		{name: "ensured stopped but running is stopped", state: "active enabled", ensure: "stopped",
			mutating: []string{"daemon-reload --system", "stop --system -- app"}},
		{name: "no change no restart", state: "active enabled", ensure: "running", trigger: ", creates: /"},
		{name: "noop reports the restart", state: "active enabled", ensure: "running", noop: true,
			refreshed: true, noopMsg: "Would have restarted via subscribe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state, env := ccmtest.FakeSystemctl(t, map[string]string{"app": tt.state})
			dir := t.TempDir()
			writeManifest(t, dir, "m.yaml", `ccm:
  resources:
    - exec:
        - trigger: {command: /bin/true`+tt.trigger+`}
    - service:
        - app: {ensure: `+tt.ensure+`, subscribe: [exec#trigger]}
`)
			args := []string{"m.yaml"}
			if tt.noop {
				args = append(args, "--noop")
			}
			out, res := applyJSONEnv(t, dir, env, args...)
			if res.Code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
			}
			e := out.event(t, "service#app")
			if e.Refreshed != tt.refreshed || e.NoopMessage != tt.noopMsg {
				t.Errorf("refreshed %v noop_message %q, want %v %q (event %+v)", e.Refreshed, e.NoopMessage, tt.refreshed, tt.noopMsg, e)
			}
			if got := mutatingCalls(ccmtest.Calls(t, state)); strings.Join(got, "\n") != strings.Join(tt.mutating, "\n") {
				t.Errorf("mutating systemctl calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.mutating, "\n"))
			}
		})
	}
}

// TestServiceFakeGrantUsesRealPath: the exec redirect acts after the grant
// check, which sees /usr/bin/systemctl: a grant without it refuses the
// call, names the real path, and the fake never runs.
func TestServiceFakeGrantUsesRealPath(t *testing.T) {
	t.Parallel()
	state, env := ccmtest.FakeSystemctl(t, map[string]string{"app": "inactive disabled"})
	dir := t.TempDir()
	writeManifest(t, dir, "grants.yaml", "exec: [/usr/bin/true]\n")
	writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - service:\n        - app: {ensure: running}\n")
	out, res := applyJSONEnv(t, dir, env, "m.yaml", "--grants", "grants.yaml")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", res.Code, res.Stderr)
	}
	errs := strings.Join(out.event(t, "service#app").Error, " ")
	if !strings.Contains(errs, "exec not granted for systemctl (resolved to /usr/bin/systemctl)") || strings.Contains(errs, "fakes") {
		t.Errorf("error %q: want the refusal to name /usr/bin/systemctl only", errs)
	}
	if calls := ccmtest.Calls(t, state); len(calls) != 0 {
		t.Errorf("the fake ran although the grant refused systemctl: %q", calls)
	}
}

// TestServiceRunLock: two ccm runs at once take turns at the service lock.
// The first one's start is slow; the second, started meanwhile, waits
// (and says so) instead of probing the unit mid-start, so it finds the
// unit running and starts nothing: exactly one start. Without the lock
// both would see the unit inactive and start it.
func TestServiceRunLock(t *testing.T) {
	t.Parallel()
	state, env := ccmtest.FakeSystemctl(t, map[string]string{"web": "inactive disabled"})
	if err := os.WriteFile(filepath.Join(state, "web.delay-start"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(env, "CCM_TEST_LOCK_DIR="+t.TempDir())
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - service:\n        - web: {ensure: running}\n")

	first := make(chan ccmtest.Result, 1)
	go func() { first <- ccmtest.Run(t, dir, env, "apply", "m.yaml") }()
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(ccmtest.Calls(t, state), "start --system -- web") {
		if time.Now().After(deadline) {
			t.Fatalf("the first run never started web: %q", ccmtest.Calls(t, state))
		}
		time.Sleep(20 * time.Millisecond)
	}
	second := ccmtest.Run(t, dir, env, "apply", "m.yaml")
	one := <-first
	if one.Code != 0 || second.Code != 0 {
		t.Fatalf("exits %d and %d\nfirst:\n%s%s\nsecond:\n%s%s", one.Code, second.Code, one.Stdout, one.Stderr, second.Stdout, second.Stderr)
	}
	if !strings.Contains(second.Stdout, "service#web: waiting for the service lock held by another ccm run") {
		t.Errorf("the second run did not say it waits:\n%s", second.Stdout)
	}
	if got := mutatingCalls(ccmtest.Calls(t, state)); strings.Join(got, "\n") != "daemon-reload --system\nstart --system -- web" {
		t.Errorf("mutating calls of both runs:\n%s\nwant one daemon-reload and one start", strings.Join(got, "\n"))
	}
}
