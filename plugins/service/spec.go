package main

import (
	"fmt"

	"github.com/ccm-dev/ccm/plugins/internal/props"
)

// spec is one service resource, read from its properties.
type spec struct {
	name     string
	ensure   string // running or stopped
	enable   *bool  // nil: leave the boot setting alone
	provider string
}

// parse reads properties and returns every problem found. The service type
// has no deferred properties, so validate and apply check the same things.
func parse(name string, p map[string]any, provider string) (spec, []string) {
	r := props.New(p)
	r.Known("name")
	s := spec{name: name, ensure: ensureRunning, provider: providerSystemd}

	if provider != "" && provider != providerSystemd {
		r.Errorf("provider %q is not available for service; use %q", provider, providerSystemd)
	}
	if err := checkName(name); err != nil {
		r.Errorf("%v", err)
	}
	if e, ok := r.String("ensure"); ok {
		switch e {
		case ensureRunning, ensureStopped:
			s.ensure = e
		default:
			r.Errorf("ensure %q is not valid for service; use %q or %q", e, ensureRunning, ensureStopped)
		}
	}
	if b, ok := r.Bool("enable"); ok {
		s.enable = &b
	}
	r.Unknown()
	return s, r.Errors()
}

// checkName enforces [A-Za-z0-9._+:~@-]+ (docs/service.md with "@" added
// for template units). A leading "-" would read as a systemctl flag.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("name is required: the systemd unit, such as nginx or getty@tty1.service")
	}
	if name[0] == '-' {
		return fmt.Errorf("name %q must not start with \"-\"", name)
	}
	for i, c := range name {
		if !nameChar(c) {
			return fmt.Errorf("name %q has %q at byte %d; a unit name uses only letters, digits and . _ + : ~ @ -", name, c, i)
		}
	}
	return nil
}

func nameChar(c rune) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '.', '_', '+', ':', '~', '@', '-':
		return true
	}
	return false
}
