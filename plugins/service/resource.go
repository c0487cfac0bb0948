package main

import (
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// serviceType implements sdk.Resource. Its one piece of state is whether
// this plugin instance has run systemctl daemon-reload yet: docs/service.md
// wants one reload before the first operation, not one per resource.
type serviceType struct {
	reloaded bool
}

// Validate checks the properties; none are deferred.
func (*serviceType) Validate(req abi.ValidateRequest) []string {
	name, _ := req.Properties["name"].(string)
	_, errs := parse(name, req.Properties, req.Provider)
	return errs
}

// Status reads the unit's running and enabled state with the two probes.
func (*serviceType) Status(h sdk.Host, req abi.Request) abi.StatusResponse {
	s, errs := parse(req.Name, req.Properties, req.Provider)
	resp := abi.StatusResponse{Provider: s.provider}
	if len(errs) > 0 {
		resp.Error = "invalid properties: " + strings.Join(errs, "; ")
		return resp
	}
	st, err := readState(h, s.name)
	if err != nil {
		resp.Error = err.Error()
		return resp
	}
	resp.FinalEnsure, resp.State = st.ensure(), stateDoc(s, st)
	return resp
}

// ensure is the observed state in ensure terms.
func (u unitState) ensure() string {
	if u.running {
		return ensureRunning
	}
	return ensureStopped
}

// stateDoc is the io.choria.ccm.v1.resource.service.state document.
func stateDoc(s spec, u unitState) map[string]any {
	return map[string]any{
		"protocol": stateProtocol,
		"ensure":   u.ensure(),
		"metadata": map[string]any{
			"name":     s.name,
			"provider": s.provider,
			"enabled":  u.enabled,
			"running":  u.running,
		},
	}
}

var _ sdk.Resource = (*serviceType)(nil)
