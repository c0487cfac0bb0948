package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccm-dev/ccm/runtime/data"
	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/manifest"
	"github.com/ccm-dev/ccm/runtime/template"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// plan is a loaded manifest: every resource resolved, expanded (except
// deferred fields) and validated, ready to run.
type plan struct {
	file        string
	resFile     string // where resource lines count: the rendered resources_jet_file, else file
	failOnError bool
	pre, post   string
	data        map[string]any // resolved data, for --render
	x           *template.Expander
	resources   []*resource
	// plugins are the declared types this manifest sees: its parents' and
	// its own ccm.plugins. Its child manifests inherit them.
	plugins pluginTable
	// ancestry is this manifest and the ones that applied it, root first:
	// its children's scopes start from it (see Engine.enter).
	ancestry []ancestor
	// infos are the descriptions of the plugins its resources use, by
	// plugin id, asked once and shared: a copy per resource was 350 bytes
	// each of a run's peak heap (3.5 MB at 10 000 files).
	infos map[string]*abi.PluginInfo
}

// resource is one entry of a plan.
type resource struct {
	src      manifest.Resource
	typ      string
	plugin   string // the plugin id serving typ here ("" for apply)
	name     string
	alias    string
	provider string
	ensure   string
	info     *abi.PluginInfo // nil for apply
	props    map[string]any  // name and ensure included; deferred fields raw
	pending  bool            // some deferred field still holds a template
	apply    *applySpec      // for type apply
	// inherit is the plugin table an apply resource's child starts from.
	inherit pluginTable
	// handle is the host's token for what the plugin kept when it validated
	// props (abi.ValidateResponse.Handle), 0 = none; set only when props are
	// complete (not pending), sent with the resource's one apply request
	// and cleared then.
	handle int64
}

func (r *resource) ref() string { return r.typ + "#" + r.name }

// where prefixes a message with "file:line: type#name:".
func (p *plan) where(r *resource, format string, args ...any) error {
	name := r.name
	if name == "" {
		name = r.src.Name
	}
	return fmt.Errorf("%s: %s#%s: %s", p.line(r), r.typ, name, fmt.Sprintf(format, args...))
}

// line is "file:line" of r's definition, for messages (such as a deferred
// field's template error) that an event already attributes to r.
func (p *plan) line(r *resource) string {
	file := p.file
	if p.resFile != "" {
		file = p.resFile
	}
	return fmt.Sprintf("%s:%d", file, r.src.Line)
}

// load reads, resolves and validates the manifest of scope s. passed is the
// apply resource's data property (nil for the root). Nothing runs here.
func (e *Engine) load(ctx context.Context, s scope, passed map[string]any) (*plan, error) {
	src, err := e.opts.Plugins.ReadFile(ctx, trust.Caller{Manifest: s.file, Grants: s.readGrants, Mode: trust.ModeStatus}, s.file)
	if err != nil {
		return nil, fmt.Errorf("cannot read manifest: %w", err)
	}
	ancestry, err := e.enter(s, len(src))
	if err != nil {
		return nil, err
	}
	// The plugins load on another core while the text is parsed.
	early := e.preloadGuessed(ctx, s, src)
	defer early.wait()
	doc, err := manifest.Parse(src, s.file)
	early.parsed()
	if err != nil {
		return nil, err
	}
	s.ancestry = ancestry
	p, err := e.loadDocument(ctx, s, doc, passed, early)
	if err != nil {
		return nil, err
	}
	p.ancestry = ancestry
	return p, nil
}

// loadDocument resolves and validates the parsed manifest doc of scope s
// (see load); `ccm ensure` builds doc in memory.
//
// early is the load preloadGuessed started for this manifest (nil: none).
// It is waited for before the plugins are loaded here, so its announced
// counts reach the host first (a small count must never decide alone how
// a plugin loads while the early load's count is on its way), and only
// the resources it did not announce are announced again, each id at least
// once so that its load is waited for.
func (e *Engine) loadDocument(ctx context.Context, s scope, doc *manifest.Document, passed map[string]any, early *earlyLoad) (*plan, error) {
	// Third-party plugins are registered (pins checked, modules compiled)
	// before anything else of the manifest is resolved or run.
	declared, err := e.declare(ctx, s, doc.Plugins)
	if err != nil {
		return nil, err
	}
	resolved, err := data.Resolve(doc.Data, doc.Hierarchy, doc.Overrides, e.opts.Facts, passed, e.opts.ExternalData)
	if err != nil {
		return nil, fmt.Errorf("%s: data: %w", s.file, err)
	}
	// Annotations (@require, @validate) hold against the final data, so an
	// override, the apply's data or --data may satisfy them.
	warnings, err := data.CheckAnnotations(s.file, doc.Annotations, resolved)
	for _, w := range warnings {
		e.report.Log(e.display(s.file), "warn", w)
	}
	if err != nil {
		return nil, err
	}
	x := template.New(template.Env{Facts: e.opts.Facts, Data: resolved, Environ: s.environ(e.opts.Environ), NoEnviron: s.confined(), Dir: s.dir, ReadFile: e.templateReader(ctx, s), KVGet: e.kvGet(ctx, s), Registrations: e.registrations(ctx, s)})
	p := &plan{file: s.file, failOnError: doc.FailOnError, data: resolved, x: x, plugins: declared}
	if p.pre, err = x.String(doc.PreMessage); err != nil {
		return nil, fmt.Errorf("%s: pre_message: %w", s.file, err)
	}
	if p.post, err = x.String(doc.PostMessage); err != nil {
		return nil, fmt.Errorf("%s: post_message: %w", s.file, err)
	}

	if doc.ResourcesJetFile != "" {
		if doc.Resources, err = jetResources(x, s, doc.ResourcesJetFile); err != nil {
			return nil, err
		}
		p.resFile = resolvePath(s.dir, doc.ResourcesJetFile)
	}

	// Compile every plugin this manifest needs, in parallel, before
	// touching any of them one by one. Each id is listed once per resource:
	// the host may load a plugin a run barely uses more cheaply.
	var ids []string
	perID := map[string]int{}
	for _, r := range doc.Resources {
		if r.Type != applyType {
			id := p.plugins.id(r.Type)
			if perID[id] == 0 {
				ids = append(ids, id)
			}
			perID[id]++
		}
	}
	var announced map[string]int
	if early != nil {
		early.wait()
		announced = early.announced
	}
	var types []string
	for _, id := range ids {
		for range max(1, perID[id]-announced[id]) {
			types = append(types, id)
		}
	}
	resume := pauseGC()
	err = e.opts.Plugins.Preload(ctx, s.pluginCaller(), types)
	resume()
	if err != nil && !errors.Is(err, hostapi.ErrUnknownType) {
		return nil, fmt.Errorf("%s: loading plugins: %w", s.file, err)
	}

	var errs []error
	for _, src := range doc.Resources {
		r, err := e.resolve(ctx, p, s, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.resources = append(p.resources, r)
	}
	if len(errs) == 0 {
		errs = append(errs, e.validate(ctx, s, p)...)
		errs = append(errs, checkRefs(p)...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if !s.allowApply {
		for _, r := range p.resources {
			if r.typ == applyType {
				return nil, p.where(r, "apply resources are not allowed here: the parent applied this manifest with allow_apply: false")
			}
		}
	}
	return p, nil
}

// jetResources renders ccm.resources_jet_file (relative to the manifest
// directory, with the manifest's data) and parses its output as the
// resource list; the resources are then expanded like inline ones.
func jetResources(x *template.Expander, s scope, name string) ([]manifest.Resource, error) {
	out, err := x.Jet(resolvePath(s.dir, name), "", "")
	if err != nil {
		return nil, fmt.Errorf("%s: ccm.resources_jet_file: %w", s.file, err)
	}
	rs, err := manifest.ParseResources([]byte(out), resolvePath(s.dir, name))
	if err != nil {
		return nil, fmt.Errorf("%s: ccm.resources_jet_file %s rendered an invalid resource list: %w", s.file, name, err)
	}
	return rs, nil
}

// resolve expands one resource's identity and non-deferred properties and
// checks what the host itself owns (type, ensure default, subscribe support).
func (e *Engine) resolve(ctx context.Context, p *plan, s scope, src manifest.Resource) (*resource, error) {
	r := &resource{src: src, typ: src.Type}
	var err error
	if r.name, err = p.x.String(src.Name); err != nil {
		return nil, p.where(r, "name: %v", err)
	}
	if r.name == "" {
		return nil, p.where(r, "the name is empty after template expansion")
	}
	if r.alias, err = p.x.String(src.Alias); err != nil {
		return nil, p.where(r, "alias: %v", err)
	}
	if r.provider, err = p.x.String(src.Provider); err != nil {
		return nil, p.where(r, "provider: %v", err)
	}
	for i, hc := range src.HealthChecks {
		if hc.Command == "" {
			// Loaded for compatibility, refused before anything runs: a
			// check that can never pass is better caught here than at 3am.
			return nil, p.where(r, "health_checks[%d]: goss_rules checks are not supported by this version of ccm; use a Nagios-style command", i)
		}
	}

	if r.typ == applyType {
		expanded, err := p.x.Expand(src.Properties)
		if err != nil {
			return nil, p.where(r, "%v", err)
		}
		props, _ := expanded.(map[string]any)
		if r.apply, err = parseApply(props, s.dir); err != nil {
			return nil, p.where(r, "%v", err)
		}
		if src.HasSubscribe {
			return nil, p.where(r, "apply does not accept subscribe; subscribe other resources to apply#%s instead", r.name)
		}
		r.ensure = "present"
		r.props = map[string]any{"name": r.name, "ensure": "present"}
		r.inherit = p.plugins
		return r, nil
	}

	r.plugin = p.plugins.id(r.typ)
	info := p.infos[r.plugin]
	if info == nil {
		i, err := e.opts.Plugins.Info(ctx, s.pluginCaller(), r.plugin)
		if err != nil {
			if errors.Is(err, hostapi.ErrUnknownType) {
				return nil, p.where(r, "%v%s; apply is built into the engine", err, p.plugins.unknownTypeHint())
			}
			return nil, p.where(r, "loading its plugin: %v", err)
		}
		if p.infos == nil {
			p.infos = map[string]*abi.PluginInfo{}
		}
		info = &i
		p.infos[r.plugin] = info
	}
	r.info = info
	if src.HasSubscribe && !info.Refresh {
		return nil, p.where(r, "type %s does not accept subscribe (it has nothing to refresh)", r.typ)
	}

	r.props = make(map[string]any, len(src.Properties)+2)
	for k, v := range src.Properties {
		if slices.Contains(info.Deferred, k) {
			r.props[k] = v
			if hasTemplate(v) {
				r.pending = true
			}
			continue
		}
		if r.props[k], err = p.x.Expand(v); err != nil {
			return nil, p.where(r, "%s: %v", k, err)
		}
	}
	r.props["name"] = r.name
	if ens, ok := r.props["ensure"]; ok {
		s, isString := ens.(string)
		if !isString {
			return nil, p.where(r, "ensure must be a string, got %T", ens)
		}
		r.ensure = s
	} else if info.DefaultEnsure != "" {
		r.ensure = info.DefaultEnsure
		r.props["ensure"] = r.ensure
	} else {
		return nil, p.where(r, "ensure is required for %s resources (one of %s)", r.typ, strings.Join(info.Ensure, ", "))
	}
	return r, nil
}

// validate checks each resource's properties against its plugin's
// properties_schema (checkSchema), then asks each plugin, one batch per
// type, whether the resources that passed are valid. Deferred fields that still hold templates are left
// out here and checked again when the resource runs.
func (e *Engine) validate(ctx context.Context, s scope, p *plan) []error {
	byType := map[string][]*resource{}
	var order []string
	for _, r := range p.resources {
		if r.info == nil {
			continue
		}
		if _, ok := byType[r.typ]; !ok {
			order = append(order, r.typ)
		}
		byType[r.typ] = append(byType[r.typ], r)
	}
	var errs []error
	for _, typ := range order {
		rs, schemaErrs := e.checkSchema(p, byType[typ])
		errs = append(errs, schemaErrs...)
		if len(rs) == 0 {
			continue
		}
		reqs := make([]abi.ValidateRequest, len(rs))
		for i, r := range rs {
			reqs[i] = abi.ValidateRequest{Properties: validationProps(r), Provider: r.provider}
		}
		resps, err := e.opts.Plugins.Validate(ctx, s.pluginCaller(), rs[0].plugin, reqs)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: validating %s resources: %w", p.file, typ, err))
			continue
		}
		for i, r := range rs {
			switch {
			case i >= len(resps):
			case len(resps[i].Errors) > 0:
				errs = append(errs, p.where(r, "%s", strings.Join(resps[i].Errors, "; ")))
			case !r.pending:
				// What was validated is what apply sends (validationProps).
				r.handle = resps[i].Handle
			}
		}
	}
	return errs
}

// validationProps returns the properties to validate at load time: deferred
// fields that still hold a template are left out.
func validationProps(r *resource) map[string]any {
	if !r.pending {
		return r.props
	}
	out := make(map[string]any, len(r.props))
	for k, v := range r.props {
		if slices.Contains(r.info.Deferred, k) && hasTemplate(v) {
			continue
		}
		out[k] = v
	}
	return out
}

// checkRefs rejects duplicates and references to resources declared later in
// the same manifest: those can never be met (docs/manifests.md). References to
// names not declared here may point into a parent or an earlier child and
// are checked when the resource runs.
func checkRefs(p *plan) []error {
	index := make(map[string]int, 2*len(p.resources))
	var errs []error
	for i, r := range p.resources {
		if j, dup := index[r.ref()]; dup && p.resources[j].ref() == r.ref() {
			errs = append(errs, p.where(r, "declared twice in this manifest (first at line %d)", p.resources[j].src.Line))
			continue
		}
		index[r.ref()] = i
		if r.alias != "" {
			if _, taken := index[r.typ+"#"+r.alias]; !taken {
				index[r.typ+"#"+r.alias] = i
			}
		}
	}
	for i, r := range p.resources {
		for _, kind := range []struct {
			what string
			refs []string
		}{{"require", r.src.Require}, {"subscribe", r.src.Subscribe}} {
			for _, ref := range kind.refs {
				if j, ok := index[ref]; ok && j >= i {
					if j == i {
						errs = append(errs, p.where(r, "%s %s refers to the resource itself", kind.what, ref))
					} else {
						errs = append(errs, p.where(r, "%s %s refers to a resource declared later (line %d); it could never be met, move it above", kind.what, ref, p.resources[j].src.Line))
					}
				}
			}
		}
	}
	return errs
}

// hasTemplate reports whether a property value holds a template anywhere.
func hasTemplate(v any) bool {
	switch t := v.(type) {
	case string:
		return template.HasTemplate(t)
	case []any:
		return slices.ContainsFunc(t, hasTemplate)
	case map[string]any:
		for _, e := range t {
			if hasTemplate(e) {
				return true
			}
		}
	}
	return false
}

// resolvePath makes a manifest-relative path absolute.
func resolvePath(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// templateReader reads the files a scope's templates name through the
// host's grant check, with the scope's grants: a vendor's readFile cannot
// reach what its plugins may not.
func (e *Engine) templateReader(ctx context.Context, s scope) func(string) ([]byte, error) {
	caller := trust.Caller{Manifest: s.file, Grants: s.grants, Mode: trust.ModeStatus}
	own := caller
	own.Grants = nil
	return func(path string) ([]byte, error) {
		// A remote bundle's own files (verified, link-free) are the
		// scope's to read whatever its fs_read grant says.
		if s.inBundle(path) {
			return e.opts.Plugins.ReadFile(ctx, own, path)
		}
		return e.opts.Plugins.ReadFile(ctx, caller, path)
	}
}

// kvGet is templates' kvGet in scope s (Options.KVGet).
func (e *Engine) kvGet(ctx context.Context, s scope) func(bucket, key string) (string, error) {
	if e.opts.KVGet == nil {
		return nil
	}
	return func(bucket, key string) (string, error) { return e.opts.KVGet(ctx, bucket, key, s.grants) }
}
