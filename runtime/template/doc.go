// Package template expands CCM templates in manifest strings: `{{ expr }}`
// and `${ expr }` (equivalent), with expressions in the Expr language
// (github.com/expr-lang/expr) over the variables Facts, Data and Environ
// and the functions lookup, readFile/file and template.
//
// A string that is exactly one expression yields the expression's native
// value (an int stays an int); otherwise every expression is rendered as
// text. Text rendering differs from CCM on purpose: nil renders as "" (CCM
// prints "<nil>"), lists and maps render as JSON (CCM prints Go syntax).
//
// Other decisions: lookup accepts "env." as an alias of "environ." (CCM's
// docs use it, its code rejects it); readFile/file/template accept
// absolute paths and resolve relative ones against Env.Dir; template()
// nests at most 10 deep; a control expression wrapped in {{ }} fails with
// a hint to remove the wrapper; errors are one line naming the expression
// and, inside Expand, the key path of the failing string.
//
// Compiled programs are cached by source text in a package-level cache:
// a run expands thousands of strings that repeat the same few expressions,
// and the programs do not depend on an Expander's values (those are passed
// at run time), so every Expander shares them. Strings without "{{" or
// "${" are returned as they are without allocating.
//
// Jet: jet(s) / jet(s, left, right) and template("x.jet") render Jet
// (github.com/CloudyKit/jet/v6) with delimiters [[ ]] by default, so the
// output may itself hold {{ }} templates. s ending in ".jet" names a file
// read relative to Env.Dir; its includes resolve relative to that file.
// Jet sees Facts/facts, Data/data, Environ/environ (plain maps; a missing
// key renders "") and lookup, readFile/file, template, kvGet,
// registrations. Output is not HTML-escaped (Jet's default would corrupt
// YAML). Errors are one line, "jet FILE:LINE: msg" for parse and runtime
// errors ("inline.jet" for text); an error raised by a function names the
// file only (Jet does not report the line) and keeps its sentinel
// (ErrNotFound). jet() and template() share the nesting bound of 10.
// Expander.Jet is also what the engine uses for ccm.resources_jet_file.
//
// kvGet and registrations (NATS) are answered by Env.KVGet and
// Env.Registrations; without them they fail with ErrNotSupported.
//
// It must not import other runtime packages, host/ or plugins/: it sees
// facts and data only as plain values handed to New.
package template
