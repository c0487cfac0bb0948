package engine

import (
	"context"
	"fmt"
	"path/filepath"

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
	// readGrants govern reading this manifest's file: the grants of the
	// manifest that named it (the parent's), nil for the root manifest,
	// which the operator named.
	readGrants trust.Chain
	limits     trust.Limits // lowered plugin-call limits (apply's limits), zero = the host's
	allowApply bool         // may this manifest contain apply resources
	// plugins are the types declared with ccm.plugins by the enclosing
	// manifests (the manifest's own are added at load, in plan.plugins).
	plugins pluginTable
	// ancestry is the manifests from the root down to this one's parent
	// (this one's own entry is added when it loads): an apply of any of
	// them is a cycle.
	ancestry []ancestor
	// bundle is the root directory of the remote bundle this manifest
	// came from ("" for a local manifest): its relative apply names must
	// stay inside it.
	bundle string
}

// rootScope is the scope of the operator's root manifest at path (Run,
// Render: fetched first when path names a remote bundle, rootManifest) or,
// for ensure, of a resource declared in file ensureFile of the working
// directory path (manifest false: no apply resources there): the one place
// the run's options (noop, health-check-only, --grants) become a scope. It
// also sets e.rootDir, which messages shorten paths against.
func (e *Engine) rootScope(ctx context.Context, path string, manifest bool) (scope, error) {
	s := scope{
		noop:            e.opts.Noop,
		healthCheckOnly: e.opts.HealthCheckOnly,
		grants:          e.opts.Grants,
		allowApply:      manifest,
	}
	if manifest {
		abs, bundle, err := e.rootManifest(ctx, path)
		if err != nil {
			return scope{}, err
		}
		s.file, s.dir, s.bundle = abs, filepath.Dir(abs), bundle
	} else {
		abs, err := filepath.Abs(path)
		if err != nil {
			return scope{}, fmt.Errorf("working directory: %w", err)
		}
		s.file, s.dir = filepath.Join(abs, ensureFile), abs
	}
	e.rootDir = s.dir
	return s, nil
}

// confined reports whether grants narrow this scope (an apply's grants or
// --grants): its templates then see no process environment, and the files
// they read are checked against the grants like a plugin's.
func (s scope) confined() bool { return len(s.grants) > 0 }

// environ is what the scope's templates see as Environ: the process
// environment (and .env) in an unconfined scope, nothing in a confined one,
// where a vendor's manifest must not read the operator's secrets. The
// parent passes what the child needs through the apply's data.
func (s scope) environ(env map[string]string) map[string]string {
	if s.confined() {
		return map[string]string{}
	}
	return env
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

// pluginCaller is the caller of the plugin calls a scope makes outside any
// one resource (registering its ccm.plugins, describing and validating):
// its grants and limits decide what the host reads for it and which plugin
// instance serves it.
// inBundle reports whether path lies inside the verified remote bundle
// this scope's manifest came from: the scope's own files.
func (s scope) inBundle(path string) bool {
	if s.bundle == "" || !filepath.IsAbs(path) {
		return false
	}
	rel, err := filepath.Rel(s.bundle, filepath.Clean(path))
	return err == nil && filepath.IsLocal(rel)
}

func (s scope) pluginCaller() trust.Caller {
	return trust.Caller{Manifest: s.file, Grants: s.grants, Limits: s.limits, Mode: trust.ModeStatus}
}
