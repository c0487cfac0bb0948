//go:build race

package schema

// raceEnabled: timing assertions do not hold under the race detector.
const raceEnabled = true
