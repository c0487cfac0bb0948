package manifest

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Health check formats.
const (
	FormatNagios = "nagios"
	FormatGoss   = "goss"
)

// HealthCheck is one entry of a resource's health_checks, defaults applied.
type HealthCheck struct {
	Name      string // defaults to the base name of the command's program, or "goss"
	Command   string // Nagios-style check; exclusive with GossRules
	Format    string // FormatNagios for Command, FormatGoss for GossRules
	GossRules any    // inline Goss rules, raw
	Tries     int    // at least 1; default 1
	TrySleep  time.Duration
	Timeout   time.Duration // 0: none
}

// healthChecks reads a health_checks list.
func (p *parser) healthChecks(n *yaml.Node) ([]HealthCheck, error) {
	return decodeList(p, n, "checks such as - command: /usr/lib/nagios/plugins/check_load", p.healthCheck)
}

func (p *parser) healthCheck(n *yaml.Node) (HealthCheck, error) {
	hc := HealthCheck{Tries: 1, TrySleep: time.Second}
	n, err := p.d.resolve(n)
	if err != nil {
		return hc, err
	}
	if n.Kind != yaml.MappingNode {
		return hc, &valueError{line: n.Line, err: fmt.Errorf("%w: a check is a map with command or goss_rules", ErrInvalid)}
	}
	pairs, err := p.d.pairs(n)
	if err != nil {
		return hc, err
	}
	hasGoss := false
	for _, kv := range pairs {
		switch kv.key {
		case "name":
			hc.Name, err = p.text(kv.value)
		case "command":
			hc.Command, err = p.str(kv.value)
		case "format":
			hc.Format, err = p.str(kv.value)
		case "goss_rules":
			hc.GossRules, err = p.d.value(kv.value)
			hasGoss = hc.GossRules != nil
		case "tries":
			hc.Tries, err = p.tries(kv.value)
		case "try_sleep":
			hc.TrySleep, err = p.duration(kv.value)
		case "timeout":
			hc.Timeout, err = p.duration(kv.value)
		default:
			err = &valueError{line: kv.keyN.Line, err: unknownKey(kv.key, healthCheckKeys)}
		}
		if err != nil {
			return hc, under(err, kv.key)
		}
	}
	switch {
	case hc.Command != "" && hasGoss:
		return hc, &valueError{line: n.Line, err: fmt.Errorf("%w: command and goss_rules are exclusive; split them into two checks", ErrInvalid)}
	case hc.Command == "" && !hasGoss:
		return hc, &valueError{line: n.Line, err: fmt.Errorf("%w: a check needs command or goss_rules", ErrInvalid)}
	}
	want := FormatNagios
	if hasGoss {
		want = FormatGoss
	}
	switch hc.Format {
	case "":
		hc.Format = want
	case want:
	default:
		return hc, &valueError{line: n.Line, path: "format", err: fmt.Errorf("%w: %q does not match the check: use %s (or omit format)", ErrInvalid, hc.Format, want)}
	}
	if hc.Name == "" {
		hc.Name = defaultCheckName(hc)
	}
	return hc, nil
}

// defaultCheckName is the base name of the command's program, as CCM labels
// Nagios checks in logs and metrics.
func defaultCheckName(hc HealthCheck) string {
	if hc.Command == "" {
		return FormatGoss
	}
	fields := strings.Fields(hc.Command)
	if len(fields) == 0 {
		return FormatNagios
	}
	return filepath.Base(fields[0])
}

func (p *parser) tries(n *yaml.Node) (int, error) {
	v, err := p.d.value(n)
	if err != nil {
		return 0, err
	}
	t, ok := v.(int)
	if !ok || t < 1 {
		return 0, &valueError{line: n.Line, err: fmt.Errorf("%w: must be a whole number of at least 1, not %s", ErrInvalid, kindName(v))}
	}
	return t, nil
}

// duration reads a duration string; zero and positive only.
func (p *parser) duration(n *yaml.Node) (time.Duration, error) {
	v, err := p.d.value(n)
	if err != nil {
		return 0, err
	}
	s, ok := v.(string)
	if !ok {
		return 0, &valueError{line: n.Line, err: fmt.Errorf("%w: must be a duration string such as 10s or 1m, not %s", ErrInvalid, kindName(v))}
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0, &valueError{line: n.Line, err: err}
	}
	if d < 0 {
		return 0, &valueError{line: n.Line, err: fmt.Errorf("%w: duration %q is negative", ErrInvalid, s)}
	}
	return d, nil
}
