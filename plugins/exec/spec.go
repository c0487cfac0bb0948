package main

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/plugins/internal/props"
	"github.com/ccm-dev/ccm/sdk/shellwords"
)

// spec is one exec resource, read from its properties.
type spec struct {
	name        string
	command     string // the command line: command, else name
	provider    string // posix or shell
	cwd         string
	env         []string // the child's whole environment
	returns     []int
	timeout     time.Duration // 0 = none
	creates     string
	onlyif      string
	unless      string
	refreshOnly bool
	logOutput   bool
}

// parse reads properties and returns every problem found. With final false
// (validate time) the deferred properties may still hold templates; checks
// of their final form are skipped for values that do.
func parse(name string, p map[string]any, provider string, final bool) (spec, []string) {
	r := props.New(p)
	r.Known("name")
	s := spec{name: name, provider: providerPosix, cwd: "/", returns: []int{0}}
	settled := func(v string) bool { return final || !props.HasTemplate(v) }

	switch provider {
	case "", providerPosix:
	case providerShell:
		s.provider = providerShell
	default:
		r.Errorf("provider %q is not available for exec; use %q or %q", provider, providerPosix, providerShell)
	}
	if name == "" {
		r.Errorf("name is required: the command, or a label when command is set")
	}
	if e, ok := r.String("ensure"); ok && e != ensurePresent {
		if e == "absent" {
			r.Errorf("ensure absent is not supported by exec: a command cannot be undone; use ensure present")
		} else {
			r.Errorf("ensure %q is not valid for exec; use present", e)
		}
	}

	s.command = name
	if c, ok := r.String("command"); ok {
		if strings.TrimSpace(c) == "" {
			r.Errorf("command must not be empty; remove it to run the name")
		}
		s.command = c
	}
	s.checkCommand(r, "command", s.command, settled)

	if c, ok := r.String("cwd"); ok {
		checkPath(r, "cwd", c, settled)
		s.cwd = c
	}
	envPath := defaultPath
	pathSet := false
	if v, ok := r.String("path"); ok {
		for _, dir := range strings.Split(v, ":") {
			if !path.IsAbs(dir) {
				r.Errorf("path entry %q must be an absolute directory (path is colon-separated)", dir)
			}
		}
		envPath, pathSet = v, true
	}
	s.env = s.readEnvironment(r, p, envPath, pathSet, settled)

	if ret, ok := r.IntList("returns"); ok {
		if len(ret) == 0 {
			r.Errorf("returns must list at least one exit code")
		}
		s.returns = ret
	}
	if v, ok := r.String("timeout"); ok {
		d, err := parseDuration(v)
		switch {
		case err != nil:
			r.Errorf("timeout: %v", err)
		case d <= 0:
			r.Errorf("timeout %q must be positive", v)
		}
		s.timeout = d
	}
	if v, ok := r.String("creates"); ok {
		checkPath(r, "creates", v, settled)
		s.creates = v
	}
	if v, ok := r.String("onlyif"); ok {
		s.onlyif = v
		s.checkCommand(r, "onlyif", v, settled)
	}
	if v, ok := r.String("unless"); ok {
		s.unless = v
		s.checkCommand(r, "unless", v, settled)
	}
	// Both spellings exist in CCM's own documents; CCM's binary silently
	// dropped refresh_only, so a "refresh-only" exec ran every time.
	a, aSet := r.Bool("refreshonly")
	b, bSet := r.Bool("refresh_only")
	if aSet && bSet && a != b {
		r.Errorf("refreshonly (%v) and refresh_only (%v) disagree; set only one of them", a, b)
	}
	s.refreshOnly = a || b
	s.logOutput, _ = r.Bool("logoutput")
	r.Unknown()
	return s, r.Errors()
}

// checkCommand makes sure a command line (the command or a guard) can be
// split for the posix provider, so a quoting mistake fails at load time.
func (s spec) checkCommand(r *props.Reader, what, line string, settled func(string) bool) {
	if strings.TrimSpace(line) == "" || s.provider != providerPosix || !settled(line) {
		return
	}
	words, err := shellwords.Split(line)
	switch {
	case err != nil:
		r.Errorf("%s %q: %v", what, line, err)
	case len(words) == 0:
		r.Errorf("%s %q has no words to run", what, line)
	}
}

// checkPath requires an absolute, canonical path: the host refuses others.
func checkPath(r *props.Reader, what, p string, settled func(string) bool) {
	switch {
	case !settled(p):
	case !path.IsAbs(p):
		r.Errorf("%s %q must be an absolute path", what, p)
	case path.Clean(p) != p:
		r.Errorf("%s %q is not canonical; use %q", what, p, path.Clean(p))
	}
}

// readEnvironment builds the child's environment: the defaults, then each
// KEY=VALUE entry, which replaces a default of the same key.
func (s spec) readEnvironment(r *props.Reader, p map[string]any, envPath string, pathSet bool, settled func(string) bool) []string {
	env := []string{"PATH=" + envPath, "LANG=C", "LC_ALL=C"}
	if v, ok := p["environment"].(string); ok && !settled(v) {
		// A single template that will expand to the list.
		r.Known("environment")
		return env
	}
	entries, _ := r.StringList("environment")
	for _, kv := range entries {
		if !settled(kv) {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			r.Errorf("environment entry %q must be KEY=VALUE with a non-empty key and value", kv)
			continue
		}
		if k == "PATH" && pathSet {
			r.Errorf("environment sets PATH and so does the path property; use only path")
			continue
		}
		env = setEnv(env, k, kv)
	}
	return env
}

func setEnv(env []string, key, kv string) []string {
	for i, e := range env {
		if strings.HasPrefix(e, key+"=") {
			env[i] = kv
			return env
		}
	}
	return append(env, kv)
}

// timedOut says what was killed and which limit did it.
func (s spec) timedOut(what string) string {
	if s.timeout > 0 {
		return fmt.Sprintf("%s timed out after %s (the timeout property); its process group was killed", what, s.timeout)
	}
	return fmt.Sprintf("%s timed out at the host's call deadline; its process group was killed; set timeout to bound it", what)
}
