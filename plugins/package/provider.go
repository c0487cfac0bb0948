package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// installed is what the package database says about one package.
type installed struct {
	present bool
	version string // as the provider reports it (apt: full; dnf: VERSION-RELEASE)
	epoch   string // dnf only
	arch    string
	status  string // provider's own word: installed, config-files, not-installed, ...
}

// provider is one package manager. Methods run commands through the host;
// nothing else touches the system.
type provider interface {
	name() string
	status(h sdk.Host, pkg string) (installed, error)
	// candidate is the newest version the repositories offer, "" if none.
	candidate(h sdk.Host, pkg string) (string, error)
	// compare orders the installed package against a version: -1, 0, 1.
	compare(cur installed, v string) int
	install(h sdk.Host, pkg, version string) error // version "" = newest
	upgradeLatest(h sdk.Host, pkg string) error
	downgrade(h sdk.Host, pkg, version string) error
	remove(h sdk.Host, pkg string) error
}

// platformFamilies maps the platformFamily fact to a provider.
var platformFamilies = map[string]string{
	"debian":    providerApt,
	"rhel":      providerDnf,
	"fedora":    providerDnf,
	"centos":    providerDnf,
	"rocky":     providerDnf,
	"almalinux": providerDnf,
}

// choose returns the forced provider, else the one the platformFamily fact
// names, else the first whose database tool answers --version. The plugin
// has no fs_read grant to look for tools on PATH, so it asks the host's
// facts first and probes only when they are silent.
func choose(h sdk.Host, forced string) (provider, error) {
	if forced != "" {
		return byName(forced), nil
	}
	if v, found, err := h.Lookup("facts.host.info.platformFamily"); err == nil && found {
		if fam, ok := v.(string); ok && platformFamilies[fam] != "" {
			return byName(platformFamilies[fam]), nil
		}
	}
	var tried []string
	for _, p := range []struct{ name, tool string }{{providerApt, dpkgQuery}, {providerDnf, rpmBin}} {
		out, err := h.Exec(query(queryTimeout, p.tool, "--version"))
		if err == nil && out.ExitCode == 0 {
			return byName(p.name), nil
		}
		tried = append(tried, p.tool)
	}
	return nil, fmt.Errorf("no package provider suits this host: platformFamily is not debian or rhel-like and %s did not run; set provider: apt or dnf", strings.Join(tried, " and "))
}

func byName(name string) provider {
	if name == providerDnf {
		return dnf{}
	}
	return apt{}
}

// query is a read-only command, sent as a probe so it runs in status and
// noop too.
func query(timeout time.Duration, argv ...string) abi.ExecRequest {
	return abi.ExecRequest{Argv: argv, Env: env, TimeoutMS: timeout.Milliseconds(), Probe: true}
}

// change is a mutating command.
func change(argv ...string) abi.ExecRequest {
	return abi.ExecRequest{Argv: argv, Env: env, TimeoutMS: installTimeout.Milliseconds()}
}

// run executes a mutating command and turns a failure into an error that
// shows the command and the end of its output.
func run(h sdk.Host, req abi.ExecRequest) error {
	out, err := h.Exec(req)
	cmd := strings.Join(req.Argv, " ")
	switch {
	case err != nil:
		return fmt.Errorf("running %q: %w", cmd, err)
	case out.TimedOut:
		return fmt.Errorf("%q timed out after %d ms; its process group was killed", cmd, req.TimeoutMS)
	case out.ExitCode != 0:
		return fmt.Errorf("%q exited %d: %s", cmd, out.ExitCode, tail(out))
	}
	return nil
}

// tail is the last lines of stderr, or stdout when stderr is empty.
func tail(out abi.ExecResponse) string {
	s := strings.TrimSpace(out.Stderr)
	if s == "" {
		s = strings.TrimSpace(out.Stdout)
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, " | ")
}
