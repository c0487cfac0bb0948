// Package host runs resource plugins: it compiles WebAssembly plugin modules
// (Extism ABI on wazero), keeps instances of each per trust scope (scope.go),
// calls their ccm_* exports, and serves their host calls. It implements hostapi.Plugins.
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
//   - plugin.go, scope.go, deadline.go, calls.go, batch.go, logging.go: one
//     compiled module per type and up to four instances, one per trust scope
//     (grant chain and limits), the per-call deadline, the
//     hostapi.Plugins methods (ApplyBatch in batch.go), plugin log lines.
//   - register.go, plugindirs.go, catalog.go: third-party plugins: files
//     registered by a manifest's ccm.plugins (read through the scope's
//     fs_read grant, sha256 pin checked before compiling, id TYPE@sum), the operator plugin directories (TYPE.wasm,
//     root scope, never shadowing a built-in), and the descriptions behind
//     `ccm plugin list` and `ccm plugin inspect`.
//   - linearmem.go: the linear memories of an instance.
//   - hostcalls.go, callstate.go, kernel.go, stdio.go: registration and
//     dispatch of the ccm_* host functions; the caller carried in each
//     call's context; the two ways documents travel (Extism kernel blocks,
//     the stdio transport).
//   - allowed.go, paths.go, probe.go, errors.go: the check, the walk to a
//     path's directory on descriptors, probe commands in read-only modes,
//     error codes.
//   - fsread.go, fswrite.go, dirsync.go, mode.go, exec.go, ids.go,
//     lookup.go: the OS work of each host call.
//   - program.go: an exec's program resolved, opened once (O_PATH) and run
//     from that descriptor, its #! interpreter checked too; descriptors
//     above 2 made close-on-exec before each exec (docs/security.md, "Exec").
//   - testdispatch.go: TestDispatcher, the real handlers and checks for
//     plugin unit tests (plugins/internal/fakehost); unused by ccm itself.
//   - lock.go: the run locks (PluginInfo.Lock) around mutating ccm_apply
//     calls, a flock shared by every ccm process.
//   - testhooks_on.go / testhooks_off.go: the exec redirect and lock
//     directory of test builds (-tags ccm_testhooks); empty in production.
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
//     resourceCall copies into callState.properties; the probe rule reads
//     the built-in guards there and nowhere else (trust.Caller carries no
//     properties).
//   - The root scope: runtime/engine's rootScope, for Run, Render, Ensure;
//     `ccm status` calls engine.Status, not the host. The inputs of a run
//     (facts, .env, --data, Hiera, --grants): cmd/ccm's loadInputs.
//   - The guest codec's per-type code: generated from sdk/abi by
//     sdk/internal/wire/gen (go generate; CI checks it is fresh).
//
// # Imports
//
// host imports sdk/abi, sdk/shellwords, runtime/trust and runtime/hostapi.
// It must not import plugins (cmd/ccm passes the built-in modules in with
// WithFS), the engine or anything else of runtime/.
//
// # Notes
//
//   - Linux only: it relies on process groups, openat2 (with a fallback) and
//     /proc/self/fd.
//   - Filesystem calls walk to their target's directory on descriptors
//     (paths.go: openat2 with RESOLVE_NO_SYMLINKS, else one O_NOFOLLOW
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
//     directory (dirsync.go); the file's own fsync still comes before its
//     rename. Results reach the engine only after both.
//   - User and group names and ids are cached for the Host's lifetime, found
//     ones only (ids.go).
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
//     modules are lent by the fs.FS when it has a Lend method (fsSource).
package host
