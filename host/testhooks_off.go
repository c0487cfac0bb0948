//go:build !ccm_testhooks

package host

// testLockDir is the test-only run lock directory (testhooks_on.go); never
// in a production build.
func testLockDir() string { return "" }
