//go:build race

package plugins_test

// raceEnabled: wazero compiles ~15x slower in a race-instrumented binary.
const raceEnabled = true
