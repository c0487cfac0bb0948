package main

import (
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// Recorded outputs of the real tools (Debian 12, Rocky 9), keyed by argv.
const dpkgW = "/usr/bin/dpkg-query -W -f=" + dpkgFormat

func dpkg(pkg, line string) step {
	return step{argv: dpkgW + " " + pkg, out: abi.ExecResponse{Stdout: line}}
}

func dpkgUnknown(pkg string) step {
	return step{argv: dpkgW + " " + pkg, out: abi.ExecResponse{ExitCode: 1, Stderr: "dpkg-query: no packages found matching " + pkg + "\n"}}
}

func policy(pkg, inst, cand string) step {
	out := pkg + ":\n  Installed: " + inst + "\n  Candidate: " + cand + "\n  Version table:\n *** " + inst + " 500\n        500 http://deb.debian.org/debian bookworm/main amd64 Packages\n        100 /var/lib/dpkg/status\n"
	return step{argv: "/usr/bin/apt-cache policy " + pkg, out: abi.ExecResponse{Stdout: out}}
}

func ok(argv string) step {
	return step{argv: argv, out: abi.ExecResponse{Stdout: "Reading package lists...\n"}}
}

const aptInst = "/usr/bin/apt-get install -y -q -o DPkg::Options::=--force-confold -o DPkg::Lock::Timeout=300 "

const rpmQ = "/usr/bin/rpm -q %s --queryformat " + rpmFormat

func rpm(pkg, line string) step {
	return step{argv: strings.Replace(rpmQ, "%s", pkg, 1), out: abi.ExecResponse{Stdout: line}}
}

func rpmMissing(pkg string) step {
	return step{argv: strings.Replace(rpmQ, "%s", pkg, 1), out: abi.ExecResponse{ExitCode: 1, Stdout: "package " + pkg + " is not installed\n"}}
}

func repoquery(pkg, lines string) step {
	return step{argv: "/usr/bin/dnf repoquery -q --latest-limit=1 --queryformat " + repoFormat + " " + pkg, out: abi.ExecResponse{Stdout: lines}}
}

// row is one case of the decision table: queries run in noop and for
// real; actions (mutations and the re-check) only for real.
type row struct {
	name     string
	provider string
	ensure   string
	queries  []step
	actions  []step
	noop     string // expected noop message; "" = no change
	final    string // final_ensure after the real run
	err      string // expected error of the real run
	noopErr  string // expected error in noop too
}

func rows() []row {
	const (
		inst91  = "coreutils 9.1-1 amd64 installed\n"
		inst90  = "coreutils 9.0-1 amd64 installed\n"
		gone    = "coreutils  amd64 not-installed\n"
		confOnl = "coreutils 9.1-1 amd64 config-files\n"
		bash    = "bash 0 5.1.8 9.el9 x86_64\n"
		bash6   = "bash 0 5.1.8 6.el9 x86_64\n"
	)
	return []row{
		// apt
		{name: "apt present installed", provider: "apt", ensure: "present", queries: []step{dpkg("coreutils", inst91)}, final: "9.1-1"},
		{
			name: "apt present absent installs", provider: "apt", ensure: "present",
			queries: []step{dpkgUnknown("coreutils")},
			actions: []step{ok(aptInst + "coreutils"), dpkg("coreutils", inst91)},
			noop:    "Would have installed latest", final: "9.1-1",
		},
		{
			name: "apt config-files only counts as absent", provider: "apt", ensure: "present",
			queries: []step{dpkg("coreutils", confOnl)},
			actions: []step{ok(aptInst + "coreutils"), dpkg("coreutils", inst91)},
			noop:    "Would have installed latest", final: "9.1-1",
		},
		{
			name: "apt version absent installs that version", provider: "apt", ensure: "9.1-1",
			queries: []step{dpkg("coreutils", gone)},
			actions: []step{ok(aptInst + "--allow-downgrades coreutils=9.1-1"), dpkg("coreutils", inst91)},
			noop:    "Would have installed version 9.1-1", final: "9.1-1",
		},
		{
			name: "apt absent installed uninstalls", provider: "apt", ensure: "absent",
			queries: []step{dpkg("coreutils", inst91)},
			actions: []step{ok("/usr/bin/apt-get -q -y -o DPkg::Lock::Timeout=300 remove coreutils"), dpkg("coreutils", confOnl)},
			noop:    "Would have uninstalled", final: "absent",
		},
		{name: "apt absent absent", provider: "apt", ensure: "absent", queries: []step{dpkgUnknown("coreutils")}, final: "absent"},
		{
			name: "apt older version upgrades", provider: "apt", ensure: "9.1-1",
			queries: []step{dpkg("coreutils", inst90)},
			actions: []step{ok(aptInst + "--allow-downgrades coreutils=9.1-1"), dpkg("coreutils", inst91)},
			noop:    "Would have upgraded to 9.1-1", final: "9.1-1",
		},
		{name: "apt equal version", provider: "apt", ensure: "9.1-1", queries: []step{dpkg("coreutils", inst91)}, final: "9.1-1"},
		{
			name: "apt newer version downgrades", provider: "apt", ensure: "9.0-1",
			queries: []step{dpkg("coreutils", inst91)},
			actions: []step{ok(aptInst + "--allow-downgrades coreutils=9.0-1"), dpkg("coreutils", inst90)},
			noop:    "Would have downgraded to 9.0-1", final: "9.0-1",
		},
		{
			name: "apt latest absent installs", provider: "apt", ensure: "latest",
			queries: []step{dpkgUnknown("coreutils")},
			actions: []step{ok(aptInst + "coreutils"), dpkg("coreutils", inst91)},
			noop:    "Would have installed latest", final: "9.1-1",
		},
		{
			name: "apt latest equal to candidate is stable (peer-note 12)", provider: "apt", ensure: "latest",
			queries: []step{dpkg("coreutils", inst91), policy("coreutils", "9.1-1", "9.1-1")}, final: "9.1-1",
		},
		{
			name: "apt latest older than candidate upgrades", provider: "apt", ensure: "latest",
			queries: []step{dpkg("coreutils", inst90), policy("coreutils", "9.0-1", "9.1-1")},
			actions: []step{ok(aptInst + "coreutils"), dpkg("coreutils", inst91)},
			noop:    "Would have upgraded to latest", final: "9.1-1",
		},
		{
			name: "apt latest with no candidate is stable", provider: "apt", ensure: "latest",
			queries: []step{dpkg("coreutils", inst91), policy("coreutils", "9.1-1", "(none)")}, final: "9.1-1",
		},
		{
			name: "apt inexact version does not converge", provider: "apt", ensure: "9.1",
			queries: []step{dpkg("coreutils", gone)},
			actions: []step{ok(aptInst + "--allow-downgrades coreutils=9.1"), dpkg("coreutils", inst91)},
			noop:    "Would have installed version 9.1", final: "9.1-1",
			err: "failed to reach desired state: coreutils is installed at 9.1-1, not 9.1",
		},
		{
			name: "apt remove that leaves it installed fails", provider: "apt", ensure: "absent",
			queries: []step{dpkg("coreutils", inst91)},
			actions: []step{ok("/usr/bin/apt-get -q -y -o DPkg::Lock::Timeout=300 remove coreutils"), dpkg("coreutils", inst91)},
			noop:    "Would have uninstalled", final: "9.1-1",
			err: "failed to reach desired state: coreutils is still installed at 9.1-1",
		},
		{
			name: "apt-get failure reports its stderr", provider: "apt", ensure: "present",
			queries: []step{dpkgUnknown("coreutils")},
			actions: []step{{argv: aptInst + "coreutils", out: abi.ExecResponse{ExitCode: 100, Stderr: "E: Unable to locate package coreutils\n"}}},
			noop:    "Would have installed latest", final: "absent",
			err: `exited 100: E: Unable to locate package coreutils`,
		},
		{
			name: "apt multi-arch picks the installed line", provider: "apt", ensure: "present",
			queries: []step{dpkg("libc6", "libc6 2.36-9 i386 config-files\nlibc6 2.36-9+deb12u4 amd64 installed\n")}, final: "2.36-9+deb12u4",
		},
		{
			name: "dpkg-query denied fails in noop too", provider: "apt", ensure: "present",
			queries: []step{{argv: dpkgW + " coreutils", err: &abi.CallError{Code: abi.CodeDenied, Message: "exec /usr/bin/dpkg-query not granted"}}},
			noopErr: "reading the status of coreutils with dpkg-query: denied: exec /usr/bin/dpkg-query not granted",
		},
		// dnf
		{name: "dnf present installed", provider: "dnf", ensure: "present", queries: []step{rpm("bash", bash)}, final: "5.1.8-9.el9"},
		{
			name: "dnf present absent installs", provider: "dnf", ensure: "present",
			queries: []step{rpmMissing("bash")},
			actions: []step{ok("/usr/bin/dnf install -y bash"), rpm("bash", bash)},
			noop:    "Would have installed latest", final: "5.1.8-9.el9",
		},
		{
			name: "dnf version absent installs that version", provider: "dnf", ensure: "5.1.8-9.el9",
			queries: []step{rpmMissing("bash")},
			actions: []step{ok("/usr/bin/dnf install -y bash-5.1.8-9.el9"), rpm("bash", bash)},
			noop:    "Would have installed version 5.1.8-9.el9", final: "5.1.8-9.el9",
		},
		{
			name: "dnf absent installed uninstalls", provider: "dnf", ensure: "absent",
			queries: []step{rpm("bash", bash)},
			actions: []step{ok("/usr/bin/dnf remove -y bash"), rpmMissing("bash")},
			noop:    "Would have uninstalled", final: "absent",
		},
		{name: "dnf absent absent", provider: "dnf", ensure: "absent", queries: []step{rpmMissing("bash")}, final: "absent"},
		{
			name: "dnf older version upgrades", provider: "dnf", ensure: "5.1.8-9.el9",
			queries: []step{rpm("bash", bash6)},
			actions: []step{ok("/usr/bin/dnf install -y bash-5.1.8-9.el9"), rpm("bash", bash)},
			noop:    "Would have upgraded to 5.1.8-9.el9", final: "5.1.8-9.el9",
		},
		{name: "dnf equal version", provider: "dnf", ensure: "5.1.8-9.el9", queries: []step{rpm("bash", bash)}, final: "5.1.8-9.el9"},
		{name: "dnf equal version with epoch", provider: "dnf", ensure: "0:5.1.8-9.el9", queries: []step{rpm("bash", bash)}, final: "5.1.8-9.el9"},
		{
			name: "dnf newer version downgrades", provider: "dnf", ensure: "5.1.8-6.el9",
			queries: []step{rpm("bash", bash)},
			actions: []step{ok("/usr/bin/dnf downgrade -y bash-5.1.8-6.el9"), rpm("bash", bash6)},
			noop:    "Would have downgraded to 5.1.8-6.el9", final: "5.1.8-6.el9",
		},
		{
			name: "dnf latest absent installs", provider: "dnf", ensure: "latest",
			queries: []step{rpmMissing("bash")},
			actions: []step{ok("/usr/bin/dnf install -y bash"), rpm("bash", bash)},
			noop:    "Would have installed latest", final: "5.1.8-9.el9",
		},
		{
			name: "dnf latest equal to candidate is stable", provider: "dnf", ensure: "latest",
			queries: []step{rpm("bash", bash), repoquery("bash", bash)}, final: "5.1.8-9.el9",
		},
		{
			name: "dnf latest older than candidate upgrades", provider: "dnf", ensure: "latest",
			queries: []step{rpm("bash", bash6), repoquery("bash", bash+"bash 0 5.1.8 9.el9 i686\n")},
			actions: []step{ok("/usr/bin/dnf upgrade -y bash"), rpm("bash", bash)},
			noop:    "Would have upgraded to latest", final: "5.1.8-9.el9",
		},
		{
			name: "dnf latest newer epoch in repo upgrades", provider: "dnf", ensure: "latest",
			queries: []step{rpm("bash", bash), repoquery("bash", "bash 1 1.0 1.el9 x86_64\n")},
			actions: []step{ok("/usr/bin/dnf upgrade -y bash"), rpm("bash", "bash 1 1.0 1.el9 x86_64\n")},
			noop:    "Would have upgraded to latest", final: "1.0-1.el9",
		},
		{
			name: "dnf several kernels report the newest", provider: "dnf", ensure: "present",
			queries: []step{rpm("kernel", "kernel 0 5.14.0 427.el9 x86_64\nkernel 0 5.14.0 503.el9 x86_64\nkernel 0 5.14.0 70.el9 x86_64\n")},
			final:   "5.14.0-503.el9",
		},
		{
			name: "dnf downgrade failure", provider: "dnf", ensure: "5.1.8-6.el9",
			queries: []step{rpm("bash", bash)},
			actions: []step{{argv: "/usr/bin/dnf downgrade -y bash-5.1.8-6.el9", out: abi.ExecResponse{ExitCode: 1, Stderr: "Error: No package bash-5.1.8-6.el9 available.\n"}}},
			noop:    "Would have downgraded to 5.1.8-6.el9", final: "5.1.8-9.el9",
			err: `"/usr/bin/dnf downgrade -y bash-5.1.8-6.el9" exited 1: Error: No package bash-5.1.8-6.el9 available.`,
		},
	}
}

func request(r row) abi.Request {
	// The package is the last word of a dpkg-query line, the third of rpm's.
	words := strings.Fields(r.queries[0].argv)
	name := words[len(words)-1]
	if r.provider == providerDnf {
		name = words[2]
	}
	return abi.Request{
		Type: typeName, Name: name, Provider: r.provider,
		Properties: map[string]any{"name": name, "ensure": r.ensure},
	}
}

func TestApplyDecisionTable(t *testing.T) {
	for _, r := range rows() {
		t.Run(r.name, func(t *testing.T) {
			t.Run("noop", func(t *testing.T) {
				h := &scriptHost{t: t, readOnly: true, script: r.queries}
				req := request(r)
				req.Noop = true
				res := (&packageType{}).Apply(h, req)
				h.done()
				if r.noopErr != "" {
					wantError(t, res, r.noopErr)
					return
				}
				if res.Error != "" || res.Changed != (r.noop != "") || res.NoopMessage != r.noop {
					t.Fatalf("noop result %+v; want message %q", res, r.noop)
				}
				if res.Provider != r.provider {
					t.Fatalf("provider %q, want %q", res.Provider, r.provider)
				}
			})
			t.Run("apply", func(t *testing.T) {
				h := &scriptHost{t: t, script: append(append([]step(nil), r.queries...), r.actions...)}
				res := (&packageType{}).Apply(h, request(r))
				h.done()
				want := r.err + r.noopErr
				if want != "" {
					wantError(t, res, want)
					if res.Changed {
						t.Fatalf("a failed resource reported changed: %+v", res)
					}
				} else if res.Error != "" || res.Changed != (len(r.actions) > 0) || res.NoopMessage != "" {
					t.Fatalf("apply result %+v; want changed %v", res, len(r.actions) > 0)
				}
				if r.noopErr != "" {
					return
				}
				if res.FinalEnsure != r.final {
					t.Fatalf("final_ensure %q, want %q", res.FinalEnsure, r.final)
				}
				meta, _ := res.State["metadata"].(map[string]any)
				if res.State["protocol"] != stateProtocol || meta["provider"] != r.provider || meta["name"] != request(r).Name {
					t.Fatalf("state %v", res.State)
				}
			})
		})
	}
}

func wantError(t *testing.T, res abi.Result, want string) {
	t.Helper()
	if !strings.Contains(res.Error, want) {
		t.Fatalf("error %q does not contain %q", res.Error, want)
	}
}
