// Package wire encodes and decodes the abi documents for the Go guest SDK
// without reflection. Under wazero, with the termination checks the host
// must enable, a Go guest runs encoding/json several times slower than the
// rest of its code, and encoding/json is about a third of a plugin's size
// (and so of its cold compile time); the ccm_* documents are few and fixed,
// so a plugin that leaves encoding/json alone does not link it at all.
//
// Marshal and Unmarshal take the abi types (and, for values such as
// Result.State, the JSON-shaped Go values: maps, slices, scalars, and as a
// fallback structs with json tags). Output decodes with encoding/json to the
// same values; input is read as encoding/json reads it (numbers in `any` are
// float64, unknown keys ignored, invalid UTF-8 replaced), except that keys
// match exactly, not case-insensitively: the host writes exact names. The
// tests hold both properties against encoding/json, including by fuzzing.
//
// The per-type code (abi_gen.go) and the completeness tests' document lists
// (docs_gen_test.go) are generated from sdk/abi by ./gen: after changing an
// abi type, run go generate ./internal/wire (CI fails on a stale file).
//
// It imports only the standard library (no encoding/json code but the
// RawMessage and Marshaler types), and builds natively and for wasip1.
package wire
