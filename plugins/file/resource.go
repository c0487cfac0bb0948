package main

import (
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/flat"
)

// fileType implements sdk.Resource. One value serves every file resource of
// a run (the host reuses the plugin instance), so it keeps only caches.
type fileType struct {
	ids  *idCache
	noop *noopDirs
}

func newFileType() *fileType { return &fileType{ids: newIDCache(), noop: &noopDirs{}} }

// Validate checks the properties statically; deferred values may still be
// templates.
func (*fileType) Validate(req abi.ValidateRequest) []string {
	name, _ := req.Properties["name"].(string)
	_, errs := parse(name, req.Properties, req.Provider)
	return errs
}

// Prepare is Validate keeping the parsed spec, which ApplyPrepared applies
// when the host refers to this resource by its handle.
func (*fileType) Prepare(req abi.ValidateRequest) (any, []string) {
	name, _ := req.Properties["name"].(string)
	s, errs := parse(name, req.Properties, req.Provider)
	if len(errs) > 0 {
		return nil, errs
	}
	return &s, nil
}

// PrepareFlat is Prepare for a batch's flat properties.
func (*fileType) PrepareFlat(p *flat.Props, provider string) (any, []string) {
	v, _ := p.Get("name")
	s, errs := parseFlat(v.Str(), p, provider)
	if len(errs) > 0 {
		return nil, errs
	}
	return &s, nil
}

// Status reads the path's state with one stat; it never mutates.
func (*fileType) Status(h sdk.Host, req abi.Request) abi.StatusResponse {
	resp := abi.StatusResponse{Provider: providerPosix}
	if errs := checkName(req.Name); len(errs) > 0 {
		resp.Error = strings.Join(errs, "; ")
		return resp
	}
	st, err := h.Stat(abi.FSStatRequest{Path: req.Name, Checksum: true})
	if err != nil {
		resp.Error = errReadState(req.Name, err).Error()
		return resp
	}
	resp.FinalEnsure = observed(st)
	resp.State = stateDoc(req.Name, st)
	return resp
}

// checkName validates only the name, for status requests that carry no
// properties.
func checkName(name string) []string {
	_, errs := parse(name, map[string]any{"ensure": ensureAbsent}, "")
	return errs
}

var _ sdk.FlatPreparer = (*fileType)(nil)
