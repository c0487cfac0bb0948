// Package props reads the typed values of one resource's properties (as
// decoded from JSON: string, float64, bool, []any, map[string]any, nil),
// given as a map or, for a batch's validation, as the SDK's flat.Props
// (sdk.FlatPreparer), and collects every problem found, so a plugin's
// validate step can report all of them at once and reject the keys it
// never read by name. Both forms give the same values and messages: a map
// is read through flat.FromMap.
//
// It is shared by the built-in plugins only and compiles for GOOS=wasip1, so
// it must import nothing but the standard library and sdk/flat (a leaf of
// the SDK that imports only the standard library): no OS access.
package props
