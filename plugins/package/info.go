package main

import (
	"encoding/json"
	"time"

	"github.com/ccm-dev/ccm/sdk/abi"
)

const (
	typeName      = "package"
	version       = "1.0.0"
	providerApt   = "apt"
	providerDnf   = "dnf"
	stateProtocol = "io.choria.ccm.v1.resource.package.state"

	ensurePresent = "present"
	ensureAbsent  = "absent"
	ensureLatest  = "latest"

	// installTimeout bounds a package manager that changes the system:
	// downloads and maintainer scripts can be slow, but never hang a run.
	installTimeout = 10 * time.Minute
	// queryTimeout bounds read-only queries of the local package database.
	queryTimeout = time.Minute
	// repoQueryTimeout bounds dnf repoquery, which may refresh repository
	// metadata over the network before answering.
	repoQueryTimeout = 5 * time.Minute
)

// Absolute tool paths: the plugin never relies on PATH lookup, so the exec
// grant names exactly what runs.
const (
	aptGet    = "/usr/bin/apt-get"
	aptCache  = "/usr/bin/apt-cache"
	dpkgQuery = "/usr/bin/dpkg-query"
	dnfBin    = "/usr/bin/dnf"
	rpmBin    = "/usr/bin/rpm"
	// The host matches the exec grant on the resolved program, and on
	// Fedora /usr/bin/dnf is a symlink to one of these.
	dnf3Bin = "/usr/bin/dnf-3"
	dnf5Bin = "/usr/bin/dnf5"
)

// env is the whole environment of every package command: no prompts, no
// pagers, untranslated output (the plugin parses it).
var env = []string{
	"PATH=/usr/bin:/bin:/usr/sbin:/sbin",
	"LANG=C",
	"LC_ALL=C",
	"DEBIAN_FRONTEND=noninteractive",
	"APT_LISTBUGS_FRONTEND=none",
	"APT_LISTCHANGES_FRONTEND=none",
}

// probePrefixes are the read-only commands, allowed in status and noop.
// Each has a /bin twin for hosts that resolve the executable there.
var probePrefixes = []string{
	dpkgQuery + " -W",
	dpkgQuery + " --version",
	aptCache + " policy",
	rpmBin + " -q",
	rpmBin + " --version",
	dnfBin + " repoquery",
	dnf3Bin + " repoquery",
	dnf5Bin + " repoquery",
}

// schema is checked by the host before ccm_validate, so it must accept
// every manifest Validate accepts (schematest checks that).
const schema = `{"type":"object","required":["name","ensure"],"additionalProperties":false,"properties":{` +
	`"name":{"type":"string","pattern":"^[A-Za-z0-9._+:~][A-Za-z0-9._+:~-]*$","description":"the package name"},` +
	`"ensure":{"type":"string","description":"present, absent, latest or an exact version",` +
	`"pattern":"^[A-Za-z0-9._+:~-]+$"}}}`

// Info describes the package type.
func (*packageType) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI:       abi.Version,
		Type:      typeName,
		Version:   version,
		Providers: []string{providerApt, providerDnf},
		Ensure:    []string{ensurePresent, ensureAbsent, ensureLatest},
		// Concurrent ccm runs take turns at the package manager (apt also
		// waits for dpkg's own lock, see apt.go).
		Lock:             "package",
		PropertiesSchema: json.RawMessage(schema),
		Capabilities: abi.Capabilities{
			Exec:      withTwins([]string{aptGet, aptCache, dpkgQuery, dnfBin, dnf3Bin, dnf5Bin, rpmBin}),
			ProbeExec: withTwins(probePrefixes),
		},
	}
}

// withTwins adds the /bin/ twin of every /usr/bin/ entry: on merged-/usr
// systems either path may be what the host resolves.
func withTwins(list []string) []string {
	out := make([]string, 0, 2*len(list))
	out = append(out, list...)
	for _, s := range list {
		out = append(out, "/bin/"+s[len("/usr/bin/"):])
	}
	return out
}
