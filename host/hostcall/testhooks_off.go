//go:build !ccm_testhooks

package hostcall

// testExecRedirect is the test-only exec redirect (testhooks_on.go). A
// production build has none: every command runs the executable the grant
// check approved.
func testExecRedirect(exe string) (string, []string) { return exe, nil }

// testRedirected reports whether a test redirect stands in for path; never
// in a production build.
func testRedirected(string) bool { return false }
