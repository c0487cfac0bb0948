package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/session"
)

// stableExec is an exec resource that never runs (creates: / exists), so
// only its health checks act; checks is the YAML list under health_checks.
func stableExec(name, checks string) string {
	return "ccm:\n  resources:\n    - exec:\n        - " + name + ":\n            command: /bin/true\n            creates: /\n            health_checks:\n" + checks
}

// TestHealthChecks runs manifests with health checks through the binary
// (docs/manifests.md): the Nagios exit codes, the default and explicit
// names, tries stopping early on OK, try_sleep, timeout, and how results
// reach the event, the failure and the summary.
func TestHealthChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		checks  string
		want    []session.HealthCheckResult
		failed  bool
		errHas  string
		minTime time.Duration // the run's health checks took at least this
		maxTime time.Duration
		summary [5]int // checked, ok, warning, critical, unknown
	}{
		{name: "ok", checks: "              - command: \"sh -c 'echo all good; exit 0'\"\n",
			want: []session.HealthCheckResult{{Name: "sh", Status: "ok", Tries: 1, Output: "all good"}}, summary: [5]int{1, 1, 0, 0, 0}},
		{name: "warning does not fail", checks: "              - command: \"sh -c 'echo disk 85%; exit 1'\"\n",
			want: []session.HealthCheckResult{{Name: "sh", Status: "warning", Tries: 1, Output: "disk 85%"}}, summary: [5]int{1, 0, 1, 0, 0}},
		{name: "critical fails", checks: "              - command: \"sh -c 'echo down; exit 2'\"\n                name: web-up\n",
			want:   []session.HealthCheckResult{{Name: "web-up", Status: "critical", Tries: 1, Output: "down"}},
			failed: true, errHas: "health check web-up: critical: down", summary: [5]int{1, 0, 0, 1, 0}},
		{name: "3 is unknown", checks: "              - command: \"sh -c 'echo ?; exit 3'\"\n",
			want:   []session.HealthCheckResult{{Name: "sh", Status: "unknown", Tries: 1, Output: "?"}},
			failed: true, errHas: "health check sh: unknown: ?", summary: [5]int{1, 0, 0, 0, 1}},
		{name: "any other code is unknown", checks: "              - command: \"sh -c 'exit 42'\"\n",
			want: []session.HealthCheckResult{{Name: "sh", Status: "unknown", Tries: 1}}, failed: true, summary: [5]int{1, 0, 0, 0, 1}},
		{name: "missing program is unknown", checks: "              - command: /no/such/check\n",
			want: []session.HealthCheckResult{{Name: "check", Status: "unknown", Tries: 1}}, failed: true, errHas: "/no/such/check", summary: [5]int{1, 0, 0, 0, 1}},
		{name: "tries stop early on ok", checks: "              - command: \"sh -c 'n=$(cat @DIR@/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > @DIR@/n; echo try $n; [ $n -ge 3 ]'\"\n                tries: 5\n                try_sleep: 200ms\n",
			want:    []session.HealthCheckResult{{Name: "sh", Status: "ok", Tries: 3, Output: "try 3"}},
			minTime: 400 * time.Millisecond, maxTime: 5 * time.Second, summary: [5]int{1, 1, 0, 0, 0}},
		{name: "tries exhausted", checks: "              - command: \"sh -c 'echo no; exit 2'\"\n                tries: 3\n                try_sleep: 100ms\n",
			want:   []session.HealthCheckResult{{Name: "sh", Status: "critical", Tries: 3, Output: "no"}},
			failed: true, minTime: 200 * time.Millisecond, summary: [5]int{1, 0, 0, 1, 0}},
		{name: "try_sleep defaults to 1s", checks: "              - command: \"sh -c 'exit 1'\"\n                tries: 2\n",
			want:    []session.HealthCheckResult{{Name: "sh", Status: "warning", Tries: 2}},
			minTime: time.Second, summary: [5]int{1, 0, 1, 0, 0}},
		{name: "timeout per attempt", checks: "              - command: sleep 30\n                timeout: 300ms\n                tries: 2\n                try_sleep: 0s\n",
			want:   []session.HealthCheckResult{{Name: "sleep", Status: "unknown", Tries: 2, Output: "timed out after 300ms"}},
			failed: true, minTime: 600 * time.Millisecond, maxTime: 10 * time.Second, summary: [5]int{1, 0, 0, 0, 1}},
		{name: "several checks, day suffix", checks: "              - command: /bin/true\n                timeout: 1d\n              - command: \"sh -c 'exit 1'\"\n                name: second\n",
			want:    []session.HealthCheckResult{{Name: "true", Status: "ok", Tries: 1}, {Name: "second", Status: "warning", Tries: 1}},
			summary: [5]int{1, 1, 1, 0, 0}},
		{name: "templated command", checks: "              - command: \"sh -c 'echo {{ Facts.host.info.os }}'\"\n",
			want: []session.HealthCheckResult{{Name: "sh", Status: "ok", Tries: 1, Output: "linux"}}, summary: [5]int{1, 1, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeManifest(t, dir, "m.yaml", stableExec("checked", tt.checks))
			start := time.Now()
			out, res := applyJSON(t, dir, "m.yaml")
			took := time.Since(start)
			wantCode := 0
			if tt.failed {
				wantCode = 1
			}
			if res.Code != wantCode {
				t.Fatalf("exit %d, want %d\n%s%s", res.Code, wantCode, res.Stdout, res.Stderr)
			}
			e := out.event(t, "exec#checked")
			if len(e.HealthCheck) != len(tt.want) {
				t.Fatalf("health_check %+v, want %+v", e.HealthCheck, tt.want)
			}
			for i, w := range tt.want {
				g := e.HealthCheck[i]
				if g.Name != w.Name || g.Status != w.Status || g.Tries != w.Tries || (w.Output != "" && g.Output != w.Output) {
					t.Errorf("check %d = %+v, want %+v", i, g, w)
				}
			}
			errs := strings.Join(e.Error, " ")
			if e.Failed != tt.failed || !strings.Contains(errs, tt.errHas) {
				t.Errorf("failed %v error %q, want %v and %q", e.Failed, errs, tt.failed, tt.errHas)
			}
			if e.Changed {
				t.Errorf("a check changed the resource: %+v", e)
			}
			s := out.Summary
			if got := [5]int{s.Checked, s.ChecksOK, s.ChecksWarning, s.ChecksCritical, s.ChecksUnknown}; got != tt.summary {
				t.Errorf("summary checked/ok/warning/critical/unknown = %v, want %v", got, tt.summary)
			}
			if took < tt.minTime || (tt.maxTime > 0 && took > tt.maxTime) {
				t.Errorf("run took %s, want between %s and %s", took, tt.minTime, tt.maxTime)
			}
		})
	}
}

// TestHealthCheckWhen: checks run after a change and after a stable run,
// in noop too, but not for a skipped or a failed resource.
func TestHealthCheckWhen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	check := "            health_checks:\n              - command: \"sh -c 'echo checked >> @DIR@/log.$(basename $0)'\"\n"
	writeManifest(t, dir, "m.yaml", `ccm:
  resources:
    - file:
        - @DIR@/changed:
            ensure: present
            content: x
            owner: @USER@
            group: @GROUP@
            mode: "0644"
`+check+`    - exec:
        - skipped:
            command: /bin/true
            control: {if: "false"}
`+check+`        - failing:
            command: /bin/false
`+check)
	out, res := applyJSON(t, dir, "m.yaml")
	if res.Code != 1 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	for ref, want := range map[string]int{"file#" + dir + "/changed": 1, "exec#skipped": 0, "exec#failing": 0} {
		if got := len(out.event(t, ref).HealthCheck); got != want {
			t.Errorf("%s ran %d checks, want %d", ref, got, want)
		}
	}
	// The stable second run and a noop run check again.
	for _, args := range [][]string{{"m.yaml"}, {"m.yaml", "--noop"}} {
		out, _ := applyJSON(t, dir, args...)
		if e := out.event(t, "file#"+dir+"/changed"); e.Changed || len(e.HealthCheck) != 1 || e.HealthCheck[0].Status != "ok" {
			t.Errorf("%v: event %+v, want stable with one ok check", args, e)
		}
	}
}

// TestMonitorOnly: --monitor-only applies nothing and reads no state; it
// runs each resource's checks (children's too), a resource without checks
// gives a quiet event, and every event says health_check_only.
func TestMonitorOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeManifest(t, dir, "child.yaml", `ccm:
  resources:
    - exec:
        - child-exec:
            command: touch @DIR@/child-ran
            health_checks:
              - command: "sh -c 'echo child bad; exit 2'"
`)
	writeManifest(t, dir, "m.yaml", `ccm:
  resources:
    - file:
        - @DIR@/created:
            ensure: present
            content: x
            owner: @USER@
            group: @GROUP@
            mode: "0644"
            health_checks:
              - command: "sh -c 'echo fine'"
    - exec:
        - touch @DIR@/ran: {}
    - apply:
        - @DIR@/child.yaml: {}
`)
	out, res := applyJSON(t, dir, "m.yaml", "--monitor-only")
	if res.Code != 1 {
		t.Fatalf("exit %d (want 1: the child's check is critical)\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, f := range []string{"created", "ran", "child-ran"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			t.Errorf("--monitor-only changed the host: %s exists", f)
		}
	}
	if e := out.event(t, "file#"+dir+"/created"); !e.HealthCheckOnly || e.Changed || e.Failed || len(e.HealthCheck) != 1 || e.HealthCheck[0].Output != "fine" {
		t.Errorf("checked file event %+v", e)
	}
	if e := out.event(t, "exec#touch "+dir+"/ran"); !e.HealthCheckOnly || e.Changed || e.Failed || len(e.HealthCheck) != 0 {
		t.Errorf("unchecked exec event %+v, want quiet", e)
	}
	if e := out.event(t, "exec#child-exec"); !e.HealthCheckOnly || !e.Failed || len(e.HealthCheck) != 1 || e.HealthCheck[0].Status != "critical" {
		t.Errorf("child event %+v, want its critical check", e)
	}
	if s := out.Summary; s.Checked != 2 || s.ChecksOK != 1 || s.ChecksCritical != 1 || s.Changed != 0 {
		t.Errorf("summary %+v", s)
	}

	// The text output names each check's status.
	text := ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--monitor-only")
	if !strings.Contains(text.Stdout, "checks=sh=ok") || !strings.Contains(text.Stdout, "checks=sh=critical") {
		t.Errorf("text output lacks checks=:\n%s", text.Stdout)
	}

	res = ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--monitor-only", "--noop")
	if res.Code != 2 || !strings.Contains(res.Stderr, "--noop and --monitor-only cannot be combined") {
		t.Errorf("--monitor-only --noop: exit %d, stderr %q", res.Code, res.Stderr)
	}
}
