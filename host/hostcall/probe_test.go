package hostcall

import (
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestGuardsOnlyFromTheRequest: the probe rule finds a built-in plugin's
// guard in the properties of the request being served (State), its one
// way in: the caller carries none.
func TestGuardsOnlyFromTheRequest(t *testing.T) {
	req := &abi.ExecRequest{Argv: []string{"test", "-f", "/x"}, Probe: true}
	st := &State{Builtin: true, Guards: []string{"onlyif"}, Caps: &abi.Capabilities{}}
	if why := probeRefused(st, req, "/usr/bin/test"); why == "" {
		t.Fatal("a guard with no properties ran")
	}
	st.Properties = map[string]any{"onlyif": "test -f /x"}
	if why := probeRefused(st, req, "/usr/bin/test"); why != "" {
		t.Fatalf("the request's guard was refused: %s", why)
	}
}
