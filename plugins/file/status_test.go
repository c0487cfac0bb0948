package main

import (
	"path/filepath"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestStatus(t *testing.T) {
	m := current(t)
	const helloSum = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
	cases := []struct {
		name    string
		setup   func(t *testing.T, dir, p string)
		path    func(dir string) string
		ensure  string
		meta    map[string]any // expected metadata entries (subset)
		absent  []string       // metadata keys that must not be there
		wantErr string
	}{
		{
			name:   "regular file",
			setup:  func(t *testing.T, _, p string) { writeFile(t, p, "hello\n", 0o640) },
			ensure: "present",
			meta: map[string]any{
				"checksum": helloSum, "mode": "0640", "size": int64(6),
				"owner": m.user, "group": m.group, "provider": "posix",
			},
		},
		{
			name:   "directory",
			setup:  func(t *testing.T, _, p string) { mkdir(t, p, 0o750) },
			ensure: "directory",
			meta:   map[string]any{"mode": "0750", "checksum": ""},
		},
		{
			name:   "missing",
			ensure: "absent",
			meta:   map[string]any{"provider": "posix"},
			absent: []string{"checksum", "mode", "owner", "mtime", "size"},
		},
		{
			name: "symlink is not followed",
			setup: func(t *testing.T, dir, p string) {
				writeFile(t, filepath.Join(dir, "real"), "x", 0o600)
				symlink(t, "real", p)
			},
			ensure: "present",
			meta:   map[string]any{"link_target": "real", "checksum": ""},
		},
		{
			name:    "relative name",
			path:    func(string) string { return "etc/motd" },
			wantErr: "must be an absolute path",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "target")
			if tc.path != nil {
				p = tc.path(dir)
			}
			if tc.setup != nil {
				tc.setup(t, dir, p)
			}
			h := &fakehost.Host{Info: info, ReadOnly: true}
			var resp abi.StatusResponse
			noMutation(t, dir, h, func() { resp = newFileType().Status(h, abi.Request{Type: "file", Name: p}) })
			wantError(t, resp.Error, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			if resp.FinalEnsure != tc.ensure || resp.State["ensure"] != tc.ensure {
				t.Fatalf("ensure %q / %v, want %q", resp.FinalEnsure, resp.State["ensure"], tc.ensure)
			}
			if resp.State["protocol"] != "io.choria.ccm.v1.resource.file.state" {
				t.Fatalf("protocol %v", resp.State["protocol"])
			}
			meta := resp.State["metadata"].(map[string]any)
			if meta["name"] != p {
				t.Fatalf("metadata name %v, want %s", meta["name"], p)
			}
			for k, v := range tc.meta {
				if meta[k] != v {
					t.Fatalf("metadata %s = %#v, want %#v (all: %v)", k, meta[k], v, meta)
				}
			}
			for _, k := range tc.absent {
				if _, ok := meta[k]; ok {
					t.Fatalf("metadata has %s for a missing path: %v", k, meta)
				}
			}
			if got := h.Calls(); len(got) != 1 || got[0] != abi.CallFSStat {
				t.Fatalf("status made calls %v, want one stat", got)
			}
		})
	}
}
