// Package host runs resource plugins: it compiles WebAssembly plugin modules
// (Extism ABI on wazero), keeps one instance per type, calls their ccm_*
// exports, and serves their host calls. It implements hostapi.Plugins.
//
// It is the only code that touches the operating system on a plugin's
// behalf. Every host call decodes its request and then passes the single
// check in allowed.go, which applies the execution mode, the plugin's
// requested capabilities and the caller's grant chain, before any OS work.
//
// # Layout
//
//   - host.go, options.go, cache.go, compile.go: Host, its options and
//     limits, compiling with the persistent compilation cache.
//   - plugin.go, deadline.go, calls.go, logging.go: one compiled module and
//     instance per type, the per-call deadline, the hostapi.Plugins
//     methods, plugin log lines.
//   - hostcalls.go, callstate.go: registration and dispatch of the ccm_* host
//     functions; the caller carried in each call's context.
//   - allowed.go, paths.go, probe.go, errors.go: the check, path
//     resolution, probe commands in read-only modes, error codes.
//   - fsread.go, fswrite.go, mode.go, exec.go, ids.go, lookup.go: the OS
//     work of each host call.
//
// # Imports
//
// host imports sdk/abi, sdk/shellwords, runtime/trust and runtime/hostapi.
// It must not import plugins (cmd/ccm passes the built-in modules in with
// WithFS), the engine or anything else of runtime/.
//
// # Notes
//
//   - Linux only: it relies on process groups, lchown and os.Root.
//   - Paths are checked after resolving symlinks in their parent components,
//     and mutations then run through an os.Root opened on the resolved parent,
//     so the final component is never followed out of its directory. A
//     symlink swapped into a parent component between the check and the
//     os.Root open is not detected: that race needs someone else with write
//     access to a parent directory of the target while ccm runs.
package host
