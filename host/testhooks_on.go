//go:build ccm_testhooks

package host

import (
	"os"
	"path/filepath"
)

// TestLockDirEnv names the variable that moves the run lock files
// (lock.go) in a test build, so parallel e2e tests do not share
// /run/lock/ccm with each other or with real runs. Built only with -tags
// ccm_testhooks; the exec redirect of test builds is in
// hostcall/testhooks_on.go.
const TestLockDirEnv = "CCM_TEST_LOCK_DIR"

func testLockDir() string {
	if d := os.Getenv(TestLockDirEnv); filepath.IsAbs(d) {
		return d
	}
	return ""
}
