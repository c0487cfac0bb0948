package main

import (
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// cannedStat answers Stat from memory, so the benchmark measures the
// plugin's own decision work, not the OS.
type cannedStat struct {
	fakehost.Host
	st abi.FSStatResponse
}

func (c *cannedStat) Stat(abi.FSStatRequest) (abi.FSStatResponse, error) { return c.st, nil }

// BenchmarkApplyStable is the plugin side of one stable file apply (native).
func BenchmarkApplyStable(b *testing.B) {
	h := &cannedStat{st: abi.FSStatResponse{
		Exists: true, Type: "file", Mode: 0o644, UID: 0, GID: 0, Owner: "root", Group: "root",
		Size: 6, SHA256: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03",
	}}
	req := abi.Request{Type: "file", Name: "/etc/motd", Properties: map[string]any{
		"ensure": "present", "content": "hello\n", "owner": "root", "group": "root", "mode": "0644",
	}}
	ft := newFileType()
	for b.Loop() {
		if res := ft.Apply(h, req); res.Changed || res.Error != "" {
			b.Fatalf("%+v", res)
		}
	}
}
