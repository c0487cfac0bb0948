package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPackageAptEndToEnd installs and removes Debian's small "hello" package
// with the real apt-get through the package plugin, as root. It skips where
// that cannot run (not root, no apt, no candidate: .ci/run refreshes the
// lists when needed) or where hello is already installed, which it must not
// disturb.
func TestPackageAptEndToEnd(t *testing.T) {
	policy := needHelloToInstall(t)

	dir := t.TempDir()
	writeManifest(t, dir, "in.yaml", "ccm:\n  resources:\n    - package:\n        - hello: {ensure: present}\n    - exec:\n        - /usr/bin/hello:\n            require: [package#hello]\n")
	writeManifest(t, dir, "out.yaml", "ccm:\n  resources:\n    - package:\n        - hello: {ensure: absent}\n")

	out, res := applyJSON(t, dir, "in.yaml", "--noop")
	if e := out.event(t, "package#hello"); res.Code != 0 || !e.Changed || !strings.HasPrefix(e.NoopMessage, "Would have installed") {
		t.Fatalf("noop: exit %d, event %+v", res.Code, e)
	}
	if exec.Command("dpkg-query", "-W", "hello").Run() == nil {
		t.Fatal("noop installed hello")
	}

	out, res = applyJSON(t, dir, "in.yaml")
	if e := out.event(t, "package#hello"); res.Code != 0 || !e.Changed || e.FinalEnsure != candidate(policy) {
		t.Fatalf("install: exit %d, event %+v\n%s", res.Code, e, res.Stderr)
	}
	if e := out.event(t, "exec#/usr/bin/hello"); e.Failed {
		t.Fatalf("hello did not run after its package: %v", e.Error)
	}
	out, res = applyJSON(t, dir, "in.yaml")
	if e := out.event(t, "package#hello"); res.Code != 0 || e.Changed {
		t.Fatalf("second run not stable: %+v", e)
	}
	out, res = applyJSON(t, dir, "out.yaml")
	if e := out.event(t, "package#hello"); res.Code != 0 || !e.Changed || e.FinalEnsure != "absent" {
		t.Fatalf("remove: exit %d, event %+v", res.Code, e)
	}
}

// candidate is the "Candidate:" version of apt-cache policy output.
func candidate(policy string) string {
	for _, line := range strings.Split(policy, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// needHelloToInstall skips unless this test may install and remove the
// real Debian package hello (root, apt, a candidate, not installed yet),
// and removes it when the test ends. It returns apt-cache policy's output.
func needHelloToInstall(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to install packages")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("no apt-get on this machine")
	}
	policy, _ := exec.Command("apt-cache", "policy", "hello").Output()
	if !strings.Contains(string(policy), "Candidate:") || strings.Contains(string(policy), "Candidate: (none)") {
		t.Skip("no candidate for hello; run apt-get update")
	}
	if err := exec.Command("dpkg-query", "-W", "hello").Run(); err == nil {
		t.Skip("hello is already installed; leaving it alone")
	}
	t.Cleanup(func() { _ = exec.Command("apt-get", "-q", "-y", "remove", "hello").Run() })
	return string(policy)
}
