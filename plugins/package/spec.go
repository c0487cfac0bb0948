package main

import (
	"fmt"
	"regexp"

	"github.com/ccm-dev/ccm/plugins/internal/props"
)

// safeWord is what CCM accepts for names and versions: no whitespace,
// quotes, shell metacharacters or '/'.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9._+:~-]+$`)

// versionWord is an exact version: an optional epoch, then a digit (dpkg
// and rpm versions start with one), so a typo such as "ensure: presnet" is
// an error, not an install of version "presnet".
var versionWord = regexp.MustCompile(`^([0-9]+:)?[0-9][A-Za-z0-9._+:~-]*$`)

// spec is one package resource, read from its properties.
type spec struct {
	name     string
	ensure   string // present, absent, latest or a version
	provider string // forced provider, "" = choose
}

// wantsVersion reports whether ensure names an exact version.
func (s spec) wantsVersion() bool {
	switch s.ensure {
	case ensurePresent, ensureAbsent, ensureLatest:
		return false
	}
	return true
}

// parse reads properties and returns every problem found.
func parse(name string, p map[string]any, provider string) (spec, []string) {
	r := props.New(p)
	r.Known("name")
	s := spec{name: name, provider: provider}
	switch {
	case name == "":
		r.Errorf("name is required: the package to manage")
	case !safeWord.MatchString(name):
		r.Errorf("name %q may only hold letters, digits and . _ + : ~ -; use the real package name", name)
	case name[0] == '-':
		// The package tools would read it as an option.
		r.Errorf("name %q must not start with '-'", name)
	}
	if e, ok := r.Text("ensure"); ok {
		s.ensure = e
	} else if !r.Has("ensure") {
		r.Errorf("ensure is required for package resources: present, absent, latest or a version")
	}
	if s.ensure != "" && s.wantsVersion() && !versionWord.MatchString(s.ensure) {
		r.Errorf("ensure %q is not present, absent, latest or a version (a version starts with a digit, e.g. 2.10-3 or 1:2.4.1-1)", s.ensure)
	}
	switch provider {
	case "", providerApt, providerDnf:
	default:
		r.Errorf("provider %q is not available for package; use %q or %q", provider, providerApt, providerDnf)
	}
	r.Unknown()
	return s, r.Errors()
}

// noopMessage says what Apply would do for an action.
func noopMessage(a action, ensure string) string {
	switch a {
	case actInstall:
		if ensure == ensurePresent || ensure == ensureLatest {
			return "Would have installed latest"
		}
		return "Would have installed version " + ensure
	case actUpgradeLatest:
		return "Would have upgraded to latest"
	case actUpgrade:
		return "Would have upgraded to " + ensure
	case actDowngrade:
		return "Would have downgraded to " + ensure
	case actRemove:
		return "Would have uninstalled"
	}
	panic(fmt.Sprintf("BUG: no noop message for action %d", a))
}
