package main

import (
	"fmt"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// action is what the decision table asks for.
type action int

const (
	actNone action = iota
	actInstall
	actUpgradeLatest
	actUpgrade
	actDowngrade
	actRemove
)

// Apply reads the package's state, decides with the table of
// docs/package.md, acts unless noop, and re-reads the state to verify.
func (*packageType) Apply(h sdk.Host, req abi.Request) abi.Result {
	s, errs := parse(req.Name, req.Properties, req.Provider)
	if len(errs) > 0 {
		return abi.Result{Provider: req.Provider, Error: "invalid properties: " + strings.Join(errs, "; ")}
	}
	p, err := choose(h, s.provider)
	if err != nil {
		return abi.Result{Error: err.Error()}
	}
	res := abi.Result{Provider: p.name()}
	cur, err := p.status(h, s.name)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.FinalEnsure, res.State = observed(cur), stateDoc(s.name, p.name(), cur)

	act, why, err := decide(h, p, s, cur)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if act == actNone {
		res.Messages = []string{why}
		return res
	}
	if req.Noop {
		res.Changed, res.NoopMessage = true, noopMessage(act, s.ensure)
		return res
	}

	if err := perform(h, p, s, act); err != nil {
		res.Error = err.Error()
		return res
	}
	after, err := p.status(h, s.name)
	if err != nil {
		res.Error = "failed to reach desired state: " + err.Error()
		return res
	}
	res.FinalEnsure, res.State = observed(after), stateDoc(s.name, p.name(), after)
	if reason := converged(p, s, after); reason != "" {
		res.Error = "failed to reach desired state: " + reason
		return res
	}
	res.Changed = true
	return res
}

// decide is the decision table. For latest on an installed package it asks
// for the candidate and changes only when installed < candidate (CCM always
// "upgrades" and reports a change.
func decide(h sdk.Host, p provider, s spec, cur installed) (action, string, error) {
	switch {
	case s.ensure == ensureAbsent && !cur.present:
		return actNone, "not installed, as wanted", nil
	case s.ensure == ensureAbsent:
		return actRemove, "", nil
	case !cur.present:
		return actInstall, "", nil
	case s.ensure == ensurePresent:
		return actNone, "installed at " + cur.version, nil
	case s.ensure == ensureLatest:
		cand, err := p.candidate(h, s.name)
		if err != nil {
			return actNone, "", err
		}
		if cand == "" {
			return actNone, fmt.Sprintf("installed at %s; no repository offers a candidate", cur.version), nil
		}
		if p.compare(cur, cand) < 0 {
			return actUpgradeLatest, "", nil
		}
		return actNone, fmt.Sprintf("installed at %s, the latest available (%s)", cur.version, cand), nil
	}
	switch c := p.compare(cur, s.ensure); {
	case c < 0:
		return actUpgrade, "", nil
	case c > 0:
		return actDowngrade, "", nil
	}
	return actNone, "installed at " + cur.version + ", as wanted", nil
}

// perform runs the package manager for an action.
func perform(h sdk.Host, p provider, s spec, act action) error {
	version := ""
	if s.wantsVersion() {
		version = s.ensure
	}
	switch act {
	case actInstall, actUpgrade:
		return p.install(h, s.name, version)
	case actUpgradeLatest:
		return p.upgradeLatest(h, s.name)
	case actDowngrade:
		return p.downgrade(h, s.name, version)
	case actRemove:
		return p.remove(h, s.name)
	}
	panic(fmt.Sprintf("BUG: nothing to perform for action %d", act))
}

// converged is the re-check: present/latest need the package installed,
// absent needs it gone, a version must compare equal. "" means converged.
func converged(p provider, s spec, after installed) string {
	switch {
	case s.ensure == ensureAbsent && after.present:
		return fmt.Sprintf("%s is still installed at %s", s.name, after.version)
	case s.ensure == ensureAbsent:
		return ""
	case !after.present:
		return fmt.Sprintf("%s is not installed (status %q)", s.name, after.status)
	case s.wantsVersion() && p.compare(after, s.ensure) != 0:
		return fmt.Sprintf("%s is installed at %s, not %s", s.name, after.version, s.ensure)
	}
	return ""
}
