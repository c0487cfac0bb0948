// Package hostcall is the OS layer of the plugin host: it serves the ccm_*
// host calls a plugin makes, and nothing else in ccm touches the operating
// system on a plugin's behalf. The plugin runtime (package host) loads and
// calls the plugins, moves documents in and out of their memory and hands
// each host call's request here with the call's State; this package
// decodes it, checks it and does the OS work.
//
// Every handler (Handlers, the one registration table) decodes its request
// strictly and then passes allowed (allowed.go), the single check, before
// any OS work: the execution mode, the plugin's requested capabilities and
// the caller's grant chain. TestEveryHostCallIsChecked runs each entry of
// the table and fails unless it went through allowed.
//
// # Layout
//
//   - handlers.go: State (who a call acts for, its limits, the plugin call
//     it serves as a Runtime), the Handlers table, strict decoding.
//   - allowed.go, probe.go: the check, and the rule for execs in read-only
//     modes (probes).
//   - paths.go, errors.go: the walk to a path's directory on descriptors;
//     error codes.
//   - fsread.go, fschunk.go, fswrite.go, fsparts.go, dirsync.go, mode.go:
//     the filesystem calls (a read at an offset, a large write in parts);
//     directory fsyncs put off to the end of the plugin call (DirSyncs).
//   - pending.go: whole-content writes whose file fsync runs in the
//     background, 16 at a time over the process, while the plugin goes on
//     (Pending). The write is checked, located and its temp file filled,
//     owner and mode set, at call time as any write (unnamed with
//     O_TMPFILE where the filesystem has it, then linked under the temp
//     name); only the fsync and then the rename, on the descriptors
//     opened at call time, are put off, so a crash leaves each target old
//     or complete. Within the call
//     a stat of a pending target answers from the filled temp file (what
//     the rename puts in place), a write of it completes it first, and
//     every other filesystem call, exec and net fetch completes all
//     pending writes before it runs (settled in handlers.go). The runtime
//     settles the rest when the guest returns, before the directory
//     fsyncs and before accepting its result; a write that could not be
//     completed fails the whole call naming its path, since the host does
//     not see which resource of a batch made it.
//   - net.go: ccm_net_fetch, an HTTP(S) request made by the host under the
//     net grant, each redirect re-checked, its body written through
//     fswrite.go's fileWrite.
//   - exec.go, program.go: ccm_exec (and host.Host.Exec): the program
//     resolved, opened once (O_PATH) and run from that descriptor, its #!
//     interpreter checked too; descriptors above 2 made close-on-exec
//     before each exec (docs/security.md, "Exec").
//   - ids.go, lookup.go: user and group lookups (NameCache), ccm_lookup and
//     ccm_log.
//   - testhooks_on.go / testhooks_off.go: the exec redirect of test builds
//     (-tags ccm_testhooks); empty in production.
//
// # Imports
//
// hostcall imports sdk/abi, sdk/shellwords and runtime/trust, and nothing
// else of ccm: not package host (the runtime imports it, never the other way
// round), not runtime/hostapi, not the engine.
package hostcall
