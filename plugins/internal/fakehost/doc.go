// Package fakehost is the sdk.Host of plugin unit tests: a thin adapter over
// the host's real host-call handlers (host.TestDispatcher), so plugin logic
// runs natively on the build machine against real files in t.TempDir() and
// real processes, under exactly the rules of ccm: the mode (read-only modes
// refuse every mutation and run only probes the probe rule allows), the
// plugin's own capabilities (Info), the grant chain (Grants; nil is the
// unconfined root) and the exec rules. It has no OS code and no rule of its
// own, so no plugin test can pass on a rule the host does not have.
//
// On top it records each call by name, so tests can count host calls, and
// can fail or ignore a call before it reaches the host (Fail, Ignore).
//
// Test-only: imported from _test.go files under plugins/ and never from a
// plugin's main package, which must build for GOOS=wasip1.
package fakehost
