package main

import (
	"fmt"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// apt manages Debian packages with dpkg-query, apt-cache and apt-get. It
// never runs apt update: refreshing indexes is the manifest author's call.
type apt struct{}

// dpkgFormat is one argv element, so no shell quoting is involved; the
// trailing \n (a dpkg-query escape) separates the lines of multi-arch
// packages.
const dpkgFormat = `${Package} ${Version} ${Architecture} ${db:Status-Status}\n`

func (apt) name() string { return providerApt }

// status reads dpkg's database. Only db:Status-Status "installed" counts as
// present: config-files, half-installed, unpacked and friends are absent,
// so an install repairs them. Of several architectures the first installed
// one is reported.
func (apt) status(h sdk.Host, pkg string) (installed, error) {
	out, err := h.Exec(query(queryTimeout, dpkgQuery, "-W", "-f="+dpkgFormat, pkg))
	if err != nil {
		return installed{}, fmt.Errorf("reading the status of %s with dpkg-query: %w", pkg, err)
	}
	if out.TimedOut {
		return installed{}, fmt.Errorf("dpkg-query -W %s timed out; is the dpkg database locked?", pkg)
	}
	if out.ExitCode != 0 {
		// dpkg-query exits 1 for a package it has never heard of.
		if strings.Contains(out.Stderr, "no packages found") {
			return installed{status: "not-installed"}, nil
		}
		return installed{}, fmt.Errorf("dpkg-query -W %s exited %d: %s", pkg, out.ExitCode, tail(out))
	}
	var first installed
	for i, line := range strings.Split(strings.TrimSpace(out.Stdout), "\n") {
		// Split on single spaces: an empty version keeps its place.
		f := strings.Split(strings.TrimSpace(line), " ")
		if len(f) != 4 {
			return installed{}, fmt.Errorf("dpkg-query -W %s printed %q; want 4 fields: package version arch status", pkg, line)
		}
		st := installed{version: f[1], arch: f[2], status: f[3], present: f[3] == "installed"}
		if !st.present {
			st.version = ""
		}
		if st.present {
			return st, nil
		}
		if i == 0 {
			first = st
		}
	}
	return first, nil
}

// candidate reads "Candidate:" from apt-cache policy; "(none)" is "".
func (apt) candidate(h sdk.Host, pkg string) (string, error) {
	out, err := h.Exec(query(queryTimeout, aptCache, "policy", pkg))
	if err != nil {
		return "", fmt.Errorf("reading the candidate version of %s with apt-cache policy: %w", pkg, err)
	}
	if out.TimedOut || out.ExitCode != 0 {
		return "", fmt.Errorf("apt-cache policy %s failed (exit %d, timed out %v): %s", pkg, out.ExitCode, out.TimedOut, tail(out))
	}
	for _, line := range strings.Split(out.Stdout, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate:"); ok {
			v = strings.TrimSpace(v)
			if v == "(none)" {
				return "", nil
			}
			return v, nil
		}
	}
	return "", nil
}

func (apt) compare(cur installed, v string) int { return compareDebian(cur.version, v) }

func (apt) install(h sdk.Host, pkg, version string) error {
	if version == "" {
		return run(h, aptInstall(pkg))
	}
	return run(h, aptInstall("--allow-downgrades", pkg+"="+version))
}

// upgradeLatest installs the candidate: apt-get install upgrades an
// installed package.
func (apt) upgradeLatest(h sdk.Host, pkg string) error { return run(h, aptInstall(pkg)) }

func (a apt) downgrade(h sdk.Host, pkg, version string) error { return a.install(h, pkg, version) }

// remove keeps configuration files (remove, not purge), as CCM does.
func (apt) remove(h sdk.Host, pkg string) error {
	return run(h, change(aptGet, "-q", "-y", "-o", dpkgLockWait, "remove", pkg))
}

// dpkgLockWait makes apt-get wait for dpkg's own lock (held by another apt,
// unattended-upgrades, or a ccm run that does not share our run lock)
// instead of failing at once; apt before 1.9.11 ignores it.
const dpkgLockWait = "DPkg::Lock::Timeout=300"

// aptInstall keeps locally changed configuration files (--force-confold)
// instead of prompting, and waits for dpkg's lock.
func aptInstall(args ...string) abi.ExecRequest {
	argv := append([]string{aptGet, "install", "-y", "-q", "-o", "DPkg::Options::=--force-confold", "-o", dpkgLockWait}, args...)
	return change(argv...)
}
