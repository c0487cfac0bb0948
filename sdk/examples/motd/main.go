// Command motd is the smallest useful ccm resource plugin, the one shown in
// docs/plugins.md: it writes /etc/motd. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o motd.wasm .
package main

import (
	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

type motd struct{}

func (motd) Info() abi.PluginInfo {
	return abi.PluginInfo{
		ABI: abi.Version, Type: "motd", Version: "0.1.0",
		Providers: []string{"posix"}, Ensure: []string{"present"}, DefaultEnsure: "present",
		Capabilities: abi.Capabilities{FSRead: []string{"/etc/motd"}, FSWrite: []string{"/etc/motd"}},
	}
}

func (motd) Validate(req abi.ValidateRequest) []string { return nil }

func (motd) Status(h sdk.Host, req abi.Request) abi.StatusResponse {
	st, err := h.Stat(abi.FSStatRequest{Path: "/etc/motd", Checksum: true})
	if err != nil {
		return abi.StatusResponse{Error: err.Error()}
	}
	return abi.StatusResponse{State: map[string]any{"sha256": st.SHA256}}
}

func (motd) Apply(h sdk.Host, req abi.Request) abi.Result {
	text, _ := req.Properties["text"].(string)
	if req.Noop {
		return abi.Result{Changed: true, NoopMessage: "Would have written /etc/motd"}
	}
	err := h.WriteFile(abi.FSWriteRequest{Path: "/etc/motd", Content: []byte(text), Mode: 0o644})
	if err != nil {
		return abi.Result{Error: err.Error()}
	}
	return abi.Result{Changed: true, FinalEnsure: "present"}
}

func main() {}

func init() { sdk.Register(motd{}) }
