package main

import (
	"os"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	ccmtest.Cleanup()
	os.Exit(code)
}
