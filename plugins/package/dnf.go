package main

import (
	"fmt"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
)

// dnf manages RPM packages with rpm and dnf.
type dnf struct{}

// rpmFormat is one argv element; the epoch prints 0 when unset.
const rpmFormat = `%{NAME} %|EPOCH?{%{EPOCH}}:{0}| %{VERSION} %{RELEASE} %{ARCH}\n`

// repoFormat is the same fields for dnf repoquery (dnf 4 and 5 spelling).
const repoFormat = `%{name} %{epoch} %{version} %{release} %{arch}\n`

func (dnf) name() string { return providerDnf }

// status asks rpm; a non-zero exit means not installed. With several
// installed versions (kernels, multilib) the newest is reported.
func (dnf) status(h sdk.Host, pkg string) (installed, error) {
	out, err := h.Exec(query(queryTimeout, rpmBin, "-q", pkg, "--queryformat", rpmFormat))
	if err != nil {
		return installed{}, fmt.Errorf("reading the status of %s with rpm -q: %w", pkg, err)
	}
	if out.TimedOut {
		return installed{}, fmt.Errorf("rpm -q %s timed out; is the rpm database locked?", pkg)
	}
	if out.ExitCode != 0 {
		return installed{status: "not-installed"}, nil
	}
	best, ok, err := newestEVR(out.Stdout, "rpm -q "+pkg)
	if err != nil || !ok {
		return installed{status: "not-installed"}, err
	}
	return best, nil
}

// candidate is the newest version any enabled repository offers.
func (dnf) candidate(h sdk.Host, pkg string) (string, error) {
	out, err := h.Exec(query(repoQueryTimeout, dnfBin, "repoquery", "-q", "--latest-limit=1", "--queryformat", repoFormat, pkg))
	if err != nil {
		return "", fmt.Errorf("reading the candidate version of %s with dnf repoquery: %w", pkg, err)
	}
	if out.TimedOut || out.ExitCode != 0 {
		return "", fmt.Errorf("dnf repoquery %s failed (exit %d, timed out %v): %s", pkg, out.ExitCode, out.TimedOut, tail(out))
	}
	best, ok, err := newestEVR(out.Stdout, "dnf repoquery "+pkg)
	if err != nil || !ok {
		return "", err
	}
	return best.epoch + ":" + best.version, nil
}

// newestEVR parses "name epoch version release arch" lines and keeps the
// newest; version in the result is VERSION-RELEASE.
func newestEVR(stdout, what string) (installed, bool, error) {
	var best installed
	var bestEVR evr
	found := false
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 5 {
			return installed{}, false, fmt.Errorf("%s printed %q; want 5 fields: name epoch version release arch", what, line)
		}
		e := evr{epoch: f[1], version: f[2], release: f[3]}
		if !found || compareEVR(e, bestEVR) > 0 {
			best = installed{present: true, version: e.String(), epoch: e.epoch, arch: f[4], status: "installed"}
			bestEVR, found = e, true
		}
	}
	return best, found, nil
}

// compare uses the full EVR when v names an epoch, else VERSION-RELEASE.
func (dnf) compare(cur installed, v string) int {
	c := parseEVR(cur.version)
	c.epoch = cur.epoch
	return compareEVR(c, parseEVR(v))
}

func (dnf) install(h sdk.Host, pkg, version string) error {
	return run(h, change(dnfBin, "install", "-y", nevra(pkg, version)))
}

// upgradeLatest uses dnf upgrade: dnf install of an installed package is
// not guaranteed to upgrade it.
func (dnf) upgradeLatest(h sdk.Host, pkg string) error {
	return run(h, change(dnfBin, "upgrade", "-y", pkg))
}

func (dnf) downgrade(h sdk.Host, pkg, version string) error {
	return run(h, change(dnfBin, "downgrade", "-y", nevra(pkg, version)))
}

func (dnf) remove(h sdk.Host, pkg string) error {
	return run(h, change(dnfBin, "remove", "-y", pkg))
}

// nevra is NAME or NAME-VERSION; an epoch moves to the front of the
// version part (NAME-EPOCH:VERSION-RELEASE), as dnf spells it.
func nevra(pkg, version string) string {
	if version == "" {
		return pkg
	}
	return pkg + "-" + version
}
