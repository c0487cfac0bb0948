//go:build ccm_testhooks

package hostcall

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TestExecRedirectEnv names the variable of the test-only exec redirect:
// "/usr/bin/systemctl=/abs/fake[,/other=/abs/fake2]". Built only with
// -tags ccm_testhooks (internal/testing/ccmtest builds the e2e binary so),
// it lets end-to-end tests run a fake systemctl without widening any
// plugin's grant.
const TestExecRedirectEnv = "CCM_TEST_EXEC_REDIRECT"

// testFakeEnvPrefix marks the host variables handed to a redirected
// command on top of the plugin's exact environment, so a fake finds its
// state directory (FAKE_SYSTEMCTL_STATE).
const testFakeEnvPrefix = "FAKE_"

// testRedirects is the parsed CCM_TEST_EXEC_REDIRECT, read at each call
// (cheap, and tests may set it late). A malformed value stops the process: a
// test that thinks it runs a fake must never run the real program.
func testRedirects() map[string]string {
	v := os.Getenv(TestExecRedirectEnv)
	if v == "" {
		return nil
	}
	m := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		from, to, ok := strings.Cut(pair, "=")
		if !ok || !filepath.IsAbs(from) || !filepath.IsAbs(to) {
			fmt.Fprintf(os.Stderr, "ccm: %s: %q is not /abs/program=/abs/fake\n", TestExecRedirectEnv, pair)
			os.Exit(2)
		}
		m[filepath.Clean(from)] = to
	}
	return m
}

// testExecRedirect returns the program to run for exe, already approved by
// allowed(), and the extra environment a redirected command gets.
func testExecRedirect(exe string) (string, []string) {
	to, ok := testRedirects()[exe]
	if !ok {
		return exe, nil
	}
	var extra []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, testFakeEnvPrefix) {
			extra = append(extra, kv)
		}
	}
	return to, extra
}

// testRedirected reports whether a redirect stands in for path, so a PATH
// lookup finds it on a machine without the real program.
func testRedirected(path string) bool {
	_, ok := testRedirects()[path]
	return ok
}
