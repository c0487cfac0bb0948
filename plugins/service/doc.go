// Command service is the built-in "service" resource type
// (docs/service.md) as a WebAssembly plugin: build it with
// GOOS=wasip1 GOARCH=wasm -buildmode=c-shared (see plugins/builtin.go). Its
// one provider, systemd, drives systemctl through ccm_exec only.
//
// Decisions recorded here (spec "decide" points and gaps):
//   - name is [A-Za-z0-9._+:~@-]+ so template units (getty@tty1) work; a
//     leading "-" is refused and every systemctl line ends its options with
//     "--" before the name, so a name can never become a flag.
//   - systemctl is run as the bare name with PATH=/usr/bin:/bin (the host
//     resolves it, matching the /usr/bin and /bin grants), never via a shell,
//     with a clean environment (LANG=C, LC_ALL=C, SYSTEMD_PAGER=,
//     SYSTEMD_COLORS=0) and a timeout on every call: 30s for the status
//     probes, 2m for daemon-reload and the mutations (systemctl waits for the
//     start/stop job, whose own default limit is 90s).
//   - Status reads stdout of is-active / is-enabled, never the exit code
//     (both exit non-zero for inactive / disabled). States outside the
//     tables of docs/service.md (deactivating, reloading, not-found, empty output) fail
//     the resource with systemctl's stderr.
//   - systemctl daemon-reload runs once per plugin instance, before its
//     first mutation and never in noop; a failed reload is retried by the
//     next resource.
//   - refreshed is true only when a restart ran (or would, in noop); a
//     start that satisfies a pending refresh reports refreshed false.
//   - A failed mutation reports changed false, the last lines of its
//     stderr in Messages; a mutation that succeeded but left the unit off
//     its target reports "failed to reach desired state: ...".
//   - health-check-only requests make no host calls, as for file and exec.
//
// It is a main package so it must import only the sdk, sdk/abi, the
// plugin-internal props package and the standard library; no OS access.
package main
