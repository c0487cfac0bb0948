package main

import (
	"sync/atomic"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// execType implements sdk.Resource; between resources it holds only what
// noop predictions need.
type execType struct {
	// noopRan is set once a noop apply of this run would have run a
	// command: predictions stop then (see predict).
	noopRan atomic.Bool
}

// Validate checks the properties statically; deferred values may still be
// templates.
func (*execType) Validate(req abi.ValidateRequest) []string {
	name, _ := req.Properties["name"].(string)
	_, errs := parse(name, req.Properties, req.Provider, false)
	return errs
}

// Status has nothing to read: a command has no state between runs (CCM does
// not support exec status either). It makes no host calls.
func (*execType) Status(_ sdk.Host, req abi.Request) abi.StatusResponse {
	provider := req.Provider
	if provider == "" {
		provider = providerPosix
	}
	return abi.StatusResponse{
		Provider:    provider,
		FinalEnsure: ensurePresent,
		State:       stateDoc(req.Name, provider, nil),
	}
}

// stateDoc is the io.choria.ccm.v1.resource.exec.state document; exitCode
// is set when the command ran.
func stateDoc(name, provider string, exitCode *int) map[string]any {
	meta := map[string]any{"name": name, "provider": provider}
	if exitCode != nil {
		meta["exit_code"] = *exitCode
	}
	return map[string]any{"protocol": stateProtocol, "ensure": ensurePresent, "metadata": meta}
}

var _ sdk.Resource = (*execType)(nil)
