package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestExecRedirectHook: CCM_TEST_EXEC_REDIRECT replaces an approved program
// by a fake only in a build with -tags ccm_testhooks; the default
// (production) build ignores it and runs the real program. Not parallel:
// it sets the environment.
func TestExecRedirectHook(t *testing.T) {
	h := sharedHost(t)
	dir := tempDir(t)
	marker := filepath.Join(dir, "fake-ran")
	fake := filepath.Join(dir, "fake")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$FAKE_MARK $*\" >"+marker+"\necho fake\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CCM_TEST_EXEC_REDIRECT", "/usr/bin/echo="+fake)
	t.Setenv("FAKE_MARK", "passed")
	caller := trust.Caller{Grants: trust.Chain{trust.All()}}
	r := apply(t, h, caller, hc{abi.CallExec, abi.ExecRequest{Argv: []string{"echo", "real"}, Env: []string{"PATH=/usr/bin"}}})[0]
	var got abi.ExecResponse
	okInto(t, r, &got)
	b, err := os.ReadFile(marker)
	if !testHooksBuilt {
		if got.Stdout != "real\n" || err == nil {
			t.Fatalf("a production build followed the redirect: stdout %q, marker %q", got.Stdout, b)
		}
		return
	}
	if got.Stdout != "fake\n" || string(b) != "passed real\n" {
		t.Fatalf("the ccm_testhooks build did not run the fake with FAKE_* passed: stdout %q, marker %q (%v)", got.Stdout, b, err)
	}

	// The grant check still sees the real path.
	narrow := trust.Caller{Grants: trust.Chain{{Exec: []string{fake}}}}
	wantCode(t, apply(t, h, narrow, hc{abi.CallExec, abi.ExecRequest{Argv: []string{"/usr/bin/echo", "x"}}})[0], abi.CodeDenied, "/usr/bin/echo")
}
