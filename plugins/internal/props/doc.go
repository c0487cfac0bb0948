// Package props reads the typed values of one resource's property map (as
// decoded from JSON: string, float64, bool, []any, map[string]any, nil) and
// collects every problem found, so a plugin's validate step can report all
// of them at once and reject the keys it never read by name.
//
// It is shared by the built-in plugins only and compiles for GOOS=wasip1, so
// it must import nothing but the standard library (no sdk, no OS access).
package props
