package main

import (
	"strings"
	"testing"

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
}
