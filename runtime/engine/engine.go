package engine

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/ccm-dev/ccm/runtime/trust"
)

// MaxDepth is how deep apply resources may nest: the root manifest is level
// 0, and a child at level MaxDepth+1 is refused before it is even read.
const MaxDepth = 10

// Options configure an Engine. Facts, Environ and ExternalData are read, never
// written.
type Options struct {
	Plugins         hostapi.Plugins
	Facts           map[string]any
	Environ         map[string]string
	ExternalData    map[string]any // CLI --data: merged last at every level, wins over all
	Noop            bool
	HealthCheckOnly bool
	Grants          trust.Chain // root scope grant; empty = everything
	Reporter        Reporter    // nil = silent
	Session         *session.Session
	// NoSchemaValidation skips checking properties against the plugins'
	// properties_schema (NO_SCHEMA_VALIDATION=1, a debug aid); ccm_validate
	// still runs.
	NoSchemaValidation bool
	// NoState tells the plugins that nothing reads Event.Status (no --json
	// output, no session store), so they may skip their state documents
	// (abi.Request.NoState); Event.Status is then usually empty.
	NoState bool
	// Diff decides when plugins are asked for the diff of a content change
	// (abi.Request.Diff): DiffAuto in noop only, DiffAlways in real runs
	// too (apply --diff), DiffNever always but hidden, "content changed
	// (diff hidden)" (--no-diff).
	Diff DiffMode
	// Remote fetches, verifies and extracts the bundle a remote manifest
	// name (https://, obj://) names, for the root manifest and for apply
	// resources (docs/remote.md); pin is a sha256 pin or "", grants the
	// naming scope's (its net grant decides which hosts and buckets it
	// may reach). It returns the extracted manifest and the bundle's
	// root directory. nil: remote names are refused.
	Remote func(ctx context.Context, name, pin string, grants trust.Chain) (manifest, root string, err error)
	// KVGet answers templates' kvGet(bucket, key) for a scope with these
	// grants (its net grant decides which buckets it may read); nil:
	// kvGet is not supported.
	KVGet func(ctx context.Context, bucket, key string, grants trust.Chain) (string, error)
	// Register publishes one register_when_stable entry, its templates
	// expanded, for a scope with these grants (docs/registration.md); it
	// returns a one-line description for the event. nil: no destination
	// is configured and the event says the entries were not published.
	// The engine never talks to NATS itself.
	Register func(ctx context.Context, entry map[string]any, grants trust.Chain) (string, error)
	// Registrations answers templates' registrations(cluster, protocol,
	// service, address) for a scope with these grants; nil: not supported.
	Registrations func(ctx context.Context, cluster, protocol, service, address string, grants trust.Chain) (any, error)
	// RootPin is the sha256 pin of a remote root manifest (apply --sha256).
	RootPin string
}

// DiffMode is Options.Diff.
type DiffMode int

// Diff modes.
const (
	DiffAuto DiffMode = iota
	DiffAlways
	DiffNever
)

// Engine applies manifests. It is not safe for concurrent Runs.
type Engine struct {
	opts    Options
	session *session.Session
	report  Reporter
	schemas schemaCache
	rootDir string
	// manifests and manifestBytes count what the run has loaded, against
	// MaxManifests and MaxManifestBytes.
	manifests     int
	manifestBytes int64
	// noopChanged holds the types of the resources that would have changed
	// the host so far in noop, for abi.Request.AfterChanges.
	noopChanged map[string]bool
	// bundles names the remote bundles fetched, by extracted root
	// directory, for display.
	bundles map[string]string
}

// New returns an engine. It panics if opts.Plugins is nil: that is a wiring
// bug, not a user error.
func New(opts Options) *Engine {
	if opts.Plugins == nil {
		panic("BUG: engine.New without Plugins")
	}
	s := opts.Session
	if s == nil {
		s = session.New()
	}
	r := opts.Reporter
	if r == nil {
		r = nopReporter{}
	}
	return &Engine{opts: opts, session: s, report: r}
}

// Result is what a completed run adds up to.
type Result struct {
	Summary session.Summary
	Events  []*session.Event
	// Interrupted is why the run stopped early when its context ended (a
	// signal, say): the resource running then was stopped and those after
	// it were not started. nil for a run that went to the end.
	Interrupted error
}

// Failed reports whether any resource failed.
func (r *Result) Failed() bool { return r.Summary.Failed > 0 }

// Changed reports whether any resource changed (or would have, in noop).
func (r *Result) Changed() bool { return r.Summary.Changed > 0 }

// Run loads and applies the manifest at path. A non-nil error means the
// manifest could not be loaded and nothing was changed (exit status 2);
// resource failures are in the Result (exit status 1).
func (e *Engine) Run(ctx context.Context, path string) (*Result, error) {
	defer e.forgetHandles(ctx)
	root, err := e.rootScope(ctx, path, true)
	if err != nil {
		return nil, err
	}
	p, err := e.load(ctx, root, nil)
	if err != nil {
		return nil, err
	}
	root.ancestry = p.ancestry
	e.runPlan(ctx, root, p)
	res := &Result{Summary: e.session.Summary(), Events: e.session.Events()}
	if ctx.Err() != nil {
		res.Interrupted = context.Cause(ctx)
	}
	return res, nil
}

// display shortens a manifest path for logs: relative to the root manifest's
// directory when it lies below it.
func (e *Engine) display(file string) string {
	for root, name := range e.bundles {
		if rel, err := filepath.Rel(root, file); err == nil && filepath.IsLocal(rel) {
			return name + "!/" + filepath.ToSlash(rel)
		}
	}
	if rel, err := filepath.Rel(e.rootDir, file); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return file
}

// rootManifest is the absolute path of the root manifest, fetched first
// when path is a remote name, and the bundle it lies in.
func (e *Engine) rootManifest(ctx context.Context, path string) (file, bundle string, err error) {
	if isRemote(path) {
		if e.opts.Remote == nil {
			return "", "", fmt.Errorf("manifest %s: remote manifests are not enabled", path)
		}
		file, root, err := e.opts.Remote(ctx, path, e.opts.RootPin, nil) // the operator named it
		e.remember(root, path)
		return file, root, err
	}
	if e.opts.RootPin != "" {
		return "", "", fmt.Errorf("manifest %s: a sha256 pin applies to a remote bundle (https://, obj://), not a local file", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Errorf("manifest %s: %w", path, err)
	}
	return abs, "", nil
}

// isRemote reports whether an apply name is a remote bundle (runtime/source).
func isRemote(name string) bool {
	return strings.HasPrefix(name, "https://") || strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "obj://")
}

// remember records that root holds the bundle name names (its password
// redacted), for display.
func (e *Engine) remember(root, name string) {
	if root == "" {
		return
	}
	if u, err := url.Parse(name); err == nil {
		name = u.Redacted()
	}
	if e.bundles == nil {
		e.bundles = map[string]string{}
	}
	e.bundles[root] = name
}
