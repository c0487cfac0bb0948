// Command exec is the built-in "exec" resource type (docs/resources.md) as a WebAssembly plugin: build it with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared (see plugins/builtin.go). It runs commands and their
// guards through ccm_exec only.
//
// Decisions recorded here (spec "decide" points and gaps):
//   - ensure absent is rejected: a command cannot be un-run.
//   - Providers: posix (default) splits the command with POSIX shell quoting
//     (sdk/shellwords, the splitter the host uses too: single quotes, double
//     quotes, backslashes; no expansion, no operators) and runs it without a
//     shell; shell runs /bin/sh -c and is used only when the resource sets
//     provider: shell. Guards use the same provider.
//   - The child environment is exactly PATH (the path property, else
//     /usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin), LANG=C,
//     LC_ALL=C, then environment entries, which replace a default with the
//     same key; setting PATH in both path and environment is an error.
//   - cwd defaults to "/"; cwd and creates must be absolute and canonical
//     (the host takes no other paths).
//   - creates is checked with a stat that does not follow a final symlink,
//     so a dangling link counts as existing; guards are not run when it
//     exists (CCM runs them anyway).
//   - A guard that cannot start, or that times out, fails the resource; its
//     non-zero exit is an answer, not an error. Guards are sent as probes,
//     the one kind of exec the host allows in noop.
//   - A failed run reports changed false (as CCM), with the last lines of
//     stderr (or stdout) in Messages. refreshed is set when a subscribed
//     resource triggered the run, in noop too (noop reports what would be).
//   - timeout accepts Go durations plus d (24h) and w (7d), like fisk.
//
// It is a main package so it must import only the sdk, sdk/abi, the
// plugin-internal props package, sdk/shellwords and the standard library; no OS access.
package main
