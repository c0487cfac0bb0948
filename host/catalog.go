package host

import (
	"context"
	"slices"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Entry describes one plugin for `ccm plugin list` and `ccm plugin inspect`.
type Entry struct {
	Type   string // the type the plugin is found under (its file name for an operator plugin)
	ID     string // the id the engine addresses it by
	Source string // "built-in" or the module file
	SHA256 string // of the module's bytes ("" when it could not be read)
	Info   abi.PluginInfo
	Err    error // why it cannot be loaded; Info is empty then
}

// Catalog loads and describes every plugin of the root scope: the built-in
// types and the operator directories' TYPE.wasm files, sorted by type. A
// plugin that fails to load (a shadowed built-in, a misnamed file, a bad
// module) is listed with its error; its Source then names the file when an
// operator directory holds one.
func (h *Host) Catalog(ctx context.Context) []Entry {
	types := h.types()
	out := make([]Entry, len(types))
	for i, typ := range types {
		out[i] = h.entry(ctx, typ)
	}
	return out
}

// Entry loads and describes the root scope's plugin for typ.
func (h *Host) Entry(ctx context.Context, typ string) Entry {
	return h.entry(ctx, typ)
}

func (h *Host) entry(ctx context.Context, typ string) Entry {
	e := Entry{Type: typ, ID: typ}
	p, err := h.plugin(typ)
	if err == nil {
		e.Info, err = p.load(ctx, trust.Caller{}) // the root scope
		p.mu.Lock()
		e.Source, e.SHA256 = p.origin, p.sum
		p.mu.Unlock()
	}
	if err != nil {
		e.Err = err
		e.Info = abi.PluginInfo{}
		if e.Source == "" {
			e.Source = h.origin(typ)
		}
	}
	return e
}

// origin says where typ would come from, for an entry that failed to load:
// its operator file when one exists, else "built-in" or "".
func (h *Host) origin(typ string) string {
	var found string
	for _, s := range h.sources {
		if !slices.Contains(s.types(), typ) {
			continue
		}
		if _, isDir := s.(dirSource); isDir || found == "" {
			found = s.origin(typ)
		}
	}
	return found
}

// Inspect loads the plugin module in file (an absolute path) and describes
// it, without making it visible anywhere. Unlike Register it does not
// refuse a type the root scope provides: Entry.Err then says so, with
// Info filled in.
func (h *Host) Inspect(ctx context.Context, file string) Entry {
	e := Entry{Source: file}
	wasm, err := readModule(file)
	if err != nil {
		e.Err = err
		return e
	}
	e.SHA256 = moduleSum(wasm)
	e.ID, e.Info, e.Err = h.Register(ctx, trust.Caller{}, file, "") // the operator named it: the root scope
	if e.Err != nil && e.Info.Type == "" {
		// Refused for shadowing: describe it anyway.
		h.mu.Lock()
		p := h.bySum[e.SHA256]
		h.mu.Unlock()
		if p != nil {
			p.mu.Lock()
			if p.info != nil {
				e.Info, e.ID = *p.info, p.id
			}
			p.mu.Unlock()
		}
	}
	e.Type = e.Info.Type
	return e
}
