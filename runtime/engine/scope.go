package engine

import (
	"github.com/ccm-dev/ccm/runtime/trust"
)

// scope is the context a manifest runs in. It is passed by value and only
// ever narrowed on the way down: a child can add noop, health-check-only and
// grant restrictions, never remove them.
type scope struct {
	file            string // absolute path of the manifest
	dir             string // its directory: relative paths resolve here
	depth           int    // 0 for the root manifest
	noop            bool
	healthCheckOnly bool
	grants          trust.Chain
	limits          trust.Limits // lowered plugin-call limits (apply's limits), zero = the host's
	allowApply      bool         // may this manifest contain apply resources
	// plugins are the types declared with ccm.plugins by the enclosing
	// manifests (the manifest's own are added at load, in plan.plugins).
	plugins pluginTable
}

func (s scope) mode() trust.Mode {
	switch {
	case s.healthCheckOnly:
		return trust.ModeHealthCheck
	case s.noop:
		return trust.ModeNoop
	}
	return trust.ModeApply
}
