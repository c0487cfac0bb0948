package host

import (
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestEffectiveModeNeverWidens: the mode travels in Caller.Mode; a request
// that sets noop or health-check-only itself (a hostapi caller other than
// the engine) can make an apply-mode call read-only, never make a
// read-only call writable, and the flags the plugin then reads are the
// mode's.
func TestEffectiveModeNeverWidens(t *testing.T) {
	all := []trust.Mode{trust.ModeApply, trust.ModeNoop, trust.ModeHealthCheck, trust.ModeStatus}
	reqs := []abi.Request{{}, {Noop: true}, {HealthCheckOnly: true}, {Noop: true, HealthCheckOnly: true}}
	for _, m := range all {
		for _, req := range reqs {
			got := effectiveMode(trust.Caller{Mode: m}, req)
			if m.ReadOnly() && got != m {
				t.Errorf("caller %s, request %+v: mode %s, want the caller's", m, req, got)
			}
			if (req.Noop || req.HealthCheckOnly) && !got.ReadOnly() {
				t.Errorf("caller %s, request %+v: writable mode %s", m, req, got)
			}
			if flags := got.Request(req); flags.Noop != (got == trust.ModeNoop || got == trust.ModeStatus) || flags.HealthCheckOnly != (got == trust.ModeHealthCheck) {
				t.Errorf("caller %s, request %+v: flags %+v for mode %s", m, req, flags, got)
			}
		}
	}
}
