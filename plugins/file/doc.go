// Command file is the built-in "file" resource type (docs/resources.md) as a WebAssembly plugin: build it with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared (see plugins/builtin.go). It manages regular files,
// directories and absent paths through host calls only.
//
// Decisions recorded here (spec "decide" points and gaps):
//   - State is read with one ccm_fs_stat that does not follow a final
//     symlink and asks the host for the sha256, so a stable file with content
//     costs one host call; contents are never read back. A source file costs
//     one more stat (its host-side checksum).
//   - Owner and group compare numerically. A name equal to the one stat
//     reports needs no lookup; other names are resolved once per plugin
//     instance (successful lookups are cached; misses are not, because a
//     later resource may create the user).
//   - A symlink at the path: content/source replace it by a regular file
//     (the rename replaces the link, never its target); attribute-only mode,
//     ensure directory and any non-regular file refuse it with an error;
//     ensure absent unlinks it.
//   - content and source are rejected with ensure directory; with ensure
//     absent they, owner, group and mode are accepted and ignored, so flipping
//     ensure is a one-line change.
//   - ensure absent on a non-empty directory without force lists it first
//     (read-only) so noop reports the same error a real run would.
//   - A failed resource reports changed false (as CCM), even when an action
//     partly succeeded before the failure.
//
// It is a main package so it must import only the sdk, sdk/abi, the
// plugin-internal props package and the standard library; no OS access.
package main
