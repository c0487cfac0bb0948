// Command package is the built-in "package" resource type
// (docs/package.md) as a WebAssembly plugin: build it with
// GOOS=wasip1 GOARCH=wasm -buildmode=c-shared (see plugins/builtin.go). It
// reads and changes packages through ccm_exec only, always with absolute tool
// paths, argv (never a shell), a timeout and a fixed environment.
//
// Decisions recorded here (spec "decide" points and gaps):
//   - ensure is required (no default_ensure): present, absent, latest or a
//     version; names and versions must match [A-Za-z0-9._+:~-]+ and a name
//     must not start with '-' (the tools would take it for an option).
//   - Provider choice when not forced: the plugin has no fs_read grant to
//     look for tools on PATH, so it reads facts.host.info.platformFamily
//     (debian → apt; rhel, fedora, centos, rocky, almalinux → dnf), else
//     probes "dpkg-query --version" then "rpm --version".
//   - latest on an installed package asks for the candidate (apt-cache
//     policy, dnf repoquery --latest-limit=1) and changes only when the
//     installed version is older (CCM always upgrades). No
//     candidate at all is stable, with a message.
//   - apt: only db:Status-Status "installed" is present; apt update never
//     runs; remove, not purge. Versions compare with dpkg's algorithm.
//   - dnf: versions compare with rpmvercmp (rpm's real algorithm, not
//     CCM's generic segment compare, so results agree with dnf). A wanted
//     version without an epoch compares VERSION-RELEASE only (as dnf
//     matches NAME-VERSION); with an epoch the full EVR, epoch first.
//     latest upgrades with "dnf upgrade -y NAME". With several installed
//     versions (kernels) the newest is reported.
//   - Versions are exact: "9.1" is not "9.1-1" (the install then fails or
//     the re-check reports it), as the spec says.
//   - Commands are serialised by construction: a plugin instance runs one
//     call at a time.
//
// It is a main package so it must import only the sdk, sdk/abi, the
// plugin-internal props package and the standard library; no OS access.
package main
