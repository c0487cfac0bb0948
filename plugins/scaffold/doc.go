// Command scaffold is the built-in "scaffold" resource type (docs/scaffold.md)
// as a WebAssembly plugin: build it with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared (see plugins/builtin.go). It renders a directory of Jet
// or Go templates into a target directory, CCM-compatible, through host calls
// only.
//
// Layout:
//   - spec.go, info.go: properties, CCM's defaults, the schema.
//   - render.go: the source walk, both engines, CCM's template functions
//     (render, write, lookup, readFile/file, jet, template) and what
//     templates see; gotmpl.go: the Go engine's functions (slim-sprig with
//     sized replacements) and the parse-tree rewrite that counts loops.
//   - budget.go, jetbudget.go: the render budgets (docs/scaffold.md,
//     "Confinement and budgets"); the Jet rewrite is adapted from
//     runtime/template/jetbudget.go, which a plugin may not import.
//   - plan.go: comparing the rendered tree with the target, post-processing,
//     writing, purging, removing; resource.go: the sdk.Resource methods.
//
// Decisions (docs/decisions.md, "Scaffold"):
//   - Templates render in memory in the guest; the target is compared by
//     host-computed sha256, one stat per file, and only differing files are
//     written. Nothing is written through a symlink.
//   - Post commands run only in apply mode, on a copy staged in
//     TARGET/.ccm-scaffold-post; noop and status compare files as rendered.
//
// Unlike the other built-ins it imports, besides the sdk, plugins/internal
// and the standard library, Jet and slim-sprig: the engines CCM's scaffolds
// are written for. No OS access; no runtime/ or host/.
package main
