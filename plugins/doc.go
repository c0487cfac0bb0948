// Package plugins embeds the built-in resource types, each a WebAssembly
// plugin built from the main package of the same name beside this file
// (file, exec, package, service, archive), so the ccm binary carries them and the host loads them like
// any third-party plugin: nothing in the host or the engine knows their
// types by name.
//
// The committed wasm/*.wasm files are build outputs; `go generate
// ./plugins` (or `go tool -modfile=tools/go.mod task plugins`) rebuilds them
// and CI fails when one differs from a fresh build of its source
// (scripts/check-plugins.sh).
//
// This package imports only the standard library (embed, io/fs). The plugin sources import only the sdk,
// plugins/internal/props and the standard library, except scaffold, which
// renders templates in the guest and so also imports Jet
// (github.com/CloudyKit/jet/v6) and slim-sprig (docs/decisions.md, "Scaffold"); plugins/internal/fakehost
// is for their tests (a thin adapter over host.TestDispatcher, so plugin
// tests meet the host's real rules). Apart from that test adapter, nothing
// here may import host/ or runtime/.
package plugins
