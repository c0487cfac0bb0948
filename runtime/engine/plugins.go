package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/ccm-dev/ccm/runtime/manifest"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// pluginTable maps the resource types declared with ccm.plugins by a
// manifest and its ancestors to the plugin serving them. Types it does not
// hold are the root scope's (built-in or operator-installed), whose plugin
// id is the type name. A table is never modified once built: a manifest
// that declares plugins gets a copy holding its parent's entries and its own.
type pluginTable map[string]declared

// declared is one ccm.plugins entry that was registered.
type declared struct {
	id       string // the host's plugin id
	module   string // the .wasm file, absolute
	manifest string // the declaring manifest
	line     int
	pin      string // the sha256 pin as written, "" when unpinned
}

// id returns the plugin id serving typ in this scope.
func (t pluginTable) id(typ string) string {
	if d, ok := t[typ]; ok {
		return d.id
	}
	return typ
}

// types lists the declared types, sorted, for messages.
func (t pluginTable) types() []string {
	return slices.Sorted(maps.Keys(t))
}

// declare registers the plugins a manifest declares and returns the table
// its resources and its child manifests see: inherited plus its own. The
// modules are read, checked against their pins and compiled in parallel;
// every problem is reported, each with the manifest's file:line.
func (e *Engine) declare(ctx context.Context, s scope, refs []manifest.PluginRef) (pluginTable, error) {
	if len(refs) == 0 {
		return s.plugins, nil
	}
	type registration struct {
		id   string
		info abi.PluginInfo
		err  error
	}
	if s.bundle != "" {
		for i, ref := range refs {
			if ref.SHA256 == "" {
				return nil, fmt.Errorf("%s:%d: ccm.plugins[%d]: plugin %s has no sha256 pin; a remote bundle's plugins must be pinned", e.display(s.file), ref.Line, i, ref.Path)
			}
		}
	}
	regs := make([]registration, len(refs))
	// The files are read through this manifest's own grant, and described
	// under its limits.
	caller := s.pluginCaller()
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Go(func() {
			r := &regs[i]
			file := resolvePath(s.dir, ref.Path)
			if s.inBundle(file) {
				// The bundle's own plugin: read as its manifests are,
				// run under the scope's grants like any plugin.
				r.id, r.info, r.err = e.opts.Plugins.RegisterBundled(ctx, caller, file, s.bundle, ref.SHA256)
				return
			}
			r.id, r.info, r.err = e.opts.Plugins.Register(ctx, caller, file, ref.SHA256)
		})
	}
	wg.Wait()

	table := maps.Clone(s.plugins)
	if table == nil {
		table = pluginTable{}
	}
	var errs []error
	for i, ref := range refs {
		r := regs[i]
		where := fmt.Sprintf("%s:%d: ccm.plugins[%d]", s.file, ref.Line, i)
		module := resolvePath(s.dir, ref.Path)
		switch prev, visible := table[r.info.Type]; {
		case r.err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", where, r.err))
		case r.info.Type == applyType:
			errs = append(errs, fmt.Errorf("%s: plugin %s provides type %q, which is built into the engine; a plugin may not shadow a built-in type", where, module, applyType))
		case visible && prev.manifest == s.file:
			errs = append(errs, fmt.Errorf("%s: plugin %s provides type %q, which line %d declares already (%s); declare each type once", where, module, r.info.Type, prev.line, prev.module))
		case visible:
			errs = append(errs, fmt.Errorf("%s: plugin %s provides type %q, which is already visible here from %s:%d (%s); a manifest may not redeclare a type its parent manifests declare, use theirs or rename the type", where, module, r.info.Type, e.display(prev.manifest), prev.line, prev.module))
		default:
			table[r.info.Type] = declared{id: r.id, module: module, manifest: s.file, line: ref.Line, pin: ref.SHA256}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return table, nil
}

// unknownTypeHint adds the declared types to an unknown-type message, so it
// lists every type the scope can see.
func (t pluginTable) unknownTypeHint() string {
	if len(t) == 0 {
		return ""
	}
	return "; declared by ccm.plugins here: " + strings.Join(t.types(), ", ")
}

// own lists, in declaration order, the ccm.plugins entries that manifest
// itself declared, in the form a manifest accepts: absolute paths, so a
// rendered manifest loads from anywhere.
func (t pluginTable) own(manifest string) []map[string]any {
	var ds []declared
	for _, d := range t {
		if d.manifest == manifest {
			ds = append(ds, d)
		}
	}
	slices.SortFunc(ds, func(a, b declared) int { return a.line - b.line })
	out := make([]map[string]any, 0, len(ds))
	for _, d := range ds {
		entry := map[string]any{"path": d.module}
		if d.pin != "" {
			entry["sha256"] = d.pin
		}
		out = append(out, entry)
	}
	return out
}
