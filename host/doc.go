// Package host runs resource plugins: it compiles WebAssembly plugin modules
// (Extism ABI on wazero), keeps instances of each per trust scope (scope.go),
// calls their ccm_* exports, and serves their host calls. It implements
// hostapi.Plugins, and is all of the plugin host that cmd/ccm and
// runtime/hostapi users see.
//
// It is two layers, one package each, and the dependency runs one way:
//
//   - host (this package) is the plugin runtime: loading, compiling,
//     instances and scopes, deadlines and limits, moving documents in and
//     out of a guest's memory (Extism kernel blocks, the stdio transport),
//     plugin logs, batches, registered and operator plugins, the run locks.
//     It touches the operating system only for its own files (the
//     compilation cache, plugin modules, lock files), never on a plugin's
//     behalf.
//   - host/hostcall is the OS layer: the ccm_* host calls, the only code
//     that touches the operating system on a plugin's behalf. Its Handlers
//     table is the one registration of host calls; every handler decodes
//     its request and then passes the single check (allowed, in
//     hostcall/allowed.go), which applies the execution mode, the plugin's
//     requested capabilities and the caller's grant chain, before any OS
//     work (hostcall.TestEveryHostCallIsChecked proves it for every entry).
//
// host imports hostcall; hostcall imports nothing of host. A plugin call's
// state (callState) embeds the hostcall.State its host calls read, and
// lends them the call as a hostcall.Runtime (logging, the exec deadline).
//
// # Layout
//
//   - host.go, options.go, cache.go, compile.go: Host, its options and
//     limits, compiling with the persistent compilation cache.
//   - plugin.go, scope.go, deadline.go, calls.go, batch.go, logging.go: one
//     compiled module per type and up to four instances, one per trust scope
//     (grant chain and limits), the per-call deadline, the
//     hostapi.Plugins methods (ApplyBatch in batch.go), plugin log lines.
//   - register.go, plugindirs.go, catalog.go: third-party plugins: files
//     registered by a manifest's ccm.plugins (read through the scope's
//     fs_read grant with hostcall.FSRead, sha256 pin checked before
//     compiling, id TYPE@sum), the operator plugin directories (TYPE.wasm,
//     root scope, never shadowing a built-in), and the descriptions behind
//     `ccm plugin list` and `ccm plugin inspect`.
//   - linearmem.go, linearmem_linux.go: the linear memories of an instance.
//   - hostcalls.go, callstate.go, kernel.go, stdio.go: the Extism host
//     functions built from hostcall.Handlers and the dispatch of each call
//     (size limit, host_calls count, a handler's panic made an io error);
//     the call state carried in each call's context; the two ways documents
//     travel (Extism kernel blocks, the stdio transport).
//   - trusted.go, backstop_linux.go: the built-ins' watchdog and backstop.
//   - testdispatch.go: TestDispatcher, the real handlers and checks for
//     plugin unit tests (plugins/internal/fakehost); unused by ccm itself.
//   - lock.go: the run locks (PluginInfo.Lock) around mutating ccm_apply
//     calls, a flock shared by every ccm process.
//   - testhooks_on.go / testhooks_off.go: the lock directory of test builds
//     (-tags ccm_testhooks); empty in production.
//
// host/hostcall (its package doc has the file list):
//
//   - handlers.go: State, Runtime, the Handlers table, strict decoding.
//   - allowed.go, probe.go: the check, the probe rule of read-only modes.
//   - paths.go, errors.go: the walk to a path's directory on descriptors,
//     error codes.
//   - fsread.go, fswrite.go, dirsync.go, mode.go, exec.go, program.go,
//     ids.go, lookup.go: the OS work of each host call; exec.go's Exec is
//     also Host.Exec, the engine's own commands (health checks).
//   - testhooks_on.go / testhooks_off.go: the exec redirect of test builds.
//
// # Where each fact lives
//
//   - The run's mode: trust.Caller.Mode, only. Apply derives the request's
//     Noop and HealthCheckOnly from it (trust.Mode.Request); the engine sets
//     neither. A request that sets them itself (a hostapi caller other than
//     the engine) can only narrow an apply-mode caller (effectiveMode in
//     calls.go), never widen a read-only one. ccm never calls ccm_apply in
//     health-check-only mode, so the plugins have no branch for it.
//   - A resource's properties: the request (abi.Request.Properties), which
//     resourceCall copies into hostcall.State.Properties; the probe rule
//     (hostcall/probe.go) reads the built-in guards there and nowhere else
//     (trust.Caller carries no properties).
//   - Whether a host call is allowed: hostcall's allowed, only. Which
//     capability a call needs and whether it mutates: hostcall's callKind.
//   - Which host calls exist: hostcall.Handlers (the Extism functions and
//     TestDispatcher are built from it); their names: sdk/abi.
//   - A call's limits: its Limits (h.limits lowered to the caller's), set
//     once by newCallState, which copies the two the host calls read
//     (RequestBytes, ExecOutputBytes) into its hostcall.State (register.go
//     raises RequestBytes to MaxModuleBytes to read a module).
//   - The root scope: runtime/engine's rootScope, for Run, Render, Ensure;
//     `ccm status` calls engine.Status, not the host. The inputs of a run
//     (facts, .env, --data, Hiera, --grants): cmd/ccm's loadInputs.
//   - The guest codec's per-type code: generated from sdk/abi by
//     sdk/internal/wire/gen (go generate; CI checks it is fresh).
//
// # Imports
//
// host imports host/hostcall, sdk/abi, runtime/trust, runtime/hostapi and
// internal/privatedir (a standard-library-only check that a directory is
// private, shared with the bundle and last-good caches);
// host/hostcall imports sdk/abi, sdk/shellwords and runtime/trust, and
// never host. Neither may import plugins (cmd/ccm passes the built-in
// modules in with WithFS), the engine or anything else of runtime/.
//
// # Notes
//
//   - Linux only: it relies on process groups, openat2 (with a fallback) and
//     /proc/self/fd.
//   - Filesystem calls walk to their target's directory on descriptors
//     (hostcall/paths.go: openat2 with RESOLVE_NO_SYMLINKS, else one O_NOFOLLOW
//     openat per component, symlinks followed by the walk itself), match the
//     grant on the exact path of the descriptor the walk ended on, and then
//     act only through it (*at calls, O_NOFOLLOW, fstat-checked
//     descriptors): a component swapped for a symlink after the check
//     changes nothing. In confined scopes a hard-linked regular file is
//     refused for read, checksum, source, chmod and chown; setuid/setgid
//     modes need setid in every grant; content is read only from regular
//     files (docs/security.md, "Filesystem").
//   - A batch (ApplyBatch) is one plugin call, so it gets one deadline:
//     Limits.CallTimeout per request, as one by one, but at most
//     max(CallTimeout, 10 minutes), so a runaway guest in a batch of 256 is
//     stopped within minutes, not hours. An exec with its own timeout still
//     moves the deadline.
//   - A write's directory fsync happens when the plugin call ends, once per
//     directory (hostcall/dirsync.go); a whole-content write's own fsync
//     runs in the background while the guest goes on, and its rename
//     follows it (hostcall/pending.go). The call settles every pending
//     write when the guest returns; results reach the engine only after
//     all are durable, and a write that could not be completed fails the
//     call.
//   - User and group names and ids are cached for the Host's lifetime, found
//     ones only (hostcall/ids.go).
//
// # Performance
//
// Measured on a 2-core VM (see bench_test.go and scripts/bench-apply.sh):
//
//   - WithCloseOnContextDone, which is what stops a runaway guest, makes
//     wazero v1.12 leave the wasm code for Go at every loop header, and a Go
//     guest jumps through its function's loop header at every branch: about
//     half of a stable apply's time. The built-ins (WithBuiltins) run without
//     it, bounded by a context check in every host call and a watchdog
//     (trusted.go); every other module keeps it (upstream wazero PRs #2524
//     and #2533 make the check inline). Guests from LLVM (TinyGo, Rust, C)
//     use wasm loops only for loops.
//   - Each Extism call costs about 100 µs whatever it does (CallWithContext
//     looks up and calls 7 kernel functions, each with a fresh wazero stack
//     and a watchdog goroutine), hence ccm_apply_batch and
//     ccm_validate_batch.
//   - Extism's kernel (v1.7.0) never reuses a freed block, and its checked
//     length and free walk every block allocated since the call began, so a
//     batch making hundreds of host calls went quadratic. The host reads a
//     block's length from its header (length_unsafe), and the SDK frees
//     only large blocks and speaks the stdio transport (abi.ExportStdio),
//     which skips the kernel altogether.
//   - Loading a 3.5 MB Go guest from the compilation cache is most of a
//     1-resource run: wazero validates every function again on a cache hit
//     (about 40 % of the run's CPU; it has no switch to skip it), then
//     decodes the module and reads back its 14 MB of machine code. Built-in
//     modules are lent by the fs.FS when it has a Lend method (fsSource),
//     and released once compiled when it has a Release method (their pages
//     leave the process).
//   - Linear memories are mmap reservations grown in place on Linux
//     (linearmem_linux.go): out of the Go heap, whose collector would let
//     it grow to twice them (docs/performance.md, "Peak RSS").
package host
