package main

import (
	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// packageType implements sdk.Resource; it holds no state between resources.
type packageType struct{}

// Validate checks the properties; no host calls.
func (*packageType) Validate(req abi.ValidateRequest) []string {
	name, _ := req.Properties["name"].(string)
	_, errs := parse(name, req.Properties, req.Provider)
	return errs
}

// Status reads the package database with probes only.
func (*packageType) Status(h sdk.Host, req abi.Request) abi.StatusResponse {
	p, err := choose(h, req.Provider)
	if err != nil {
		return abi.StatusResponse{Error: err.Error()}
	}
	resp := abi.StatusResponse{Provider: p.name()}
	cur, err := p.status(h, req.Name)
	if err != nil {
		resp.Error = err.Error()
		return resp
	}
	resp.FinalEnsure, resp.State = observed(cur), stateDoc(req.Name, p.name(), cur)
	return resp
}

// observed is the event's final_ensure: the installed version or absent.
func observed(cur installed) string {
	if !cur.present {
		return ensureAbsent
	}
	return cur.version
}

// stateDoc is the io.choria.ccm.v1.resource.package.state document.
func stateDoc(name, provider string, cur installed) map[string]any {
	meta := map[string]any{
		"name":     name,
		"version":  cur.version,
		"arch":     cur.arch,
		"provider": provider,
		"extended": map[string]any{"status": cur.status},
	}
	if cur.epoch != "" {
		meta["extended"].(map[string]any)["epoch"] = cur.epoch
	}
	return map[string]any{"protocol": stateProtocol, "ensure": observed(cur), "metadata": meta}
}

var _ sdk.Resource = (*packageType)(nil)
