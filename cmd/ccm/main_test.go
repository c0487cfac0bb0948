package main

import (
	"os"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

func TestMain(m *testing.M) {
	// Every ccm a test starts compiles before it runs, as before cold
	// starts (ccmtest.Command sets it too): a background compile would
	// outlive its test. coldstart_e2e_test.go turns it back on.
	os.Setenv("CCM_BACKGROUND_COMPILE", "0")
	code := m.Run()
	ccmtest.Cleanup()
	os.Exit(code)
}
