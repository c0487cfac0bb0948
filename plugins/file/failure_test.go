package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestApplyFailures covers the paths where the OS does not do what was asked.
func TestApplyFailures(t *testing.T) {
	m := current(t)
	cases := []struct {
		name    string
		setup   func(t *testing.T, dir, p string)
		props   func(p map[string]any)
		fail    map[string]*abi.CallError
		ignore  map[string]bool
		name2   func(dir string) string // target path; default dir/target
		wantErr string                  // DIR stands for the case's directory
	}{
		{
			name:    "chmod that does nothing fails verification",
			setup:   func(t *testing.T, _, p string) { writeFile(t, p, "hello\n", 0o600) },
			ignore:  map[string]bool{abi.CallFSChmod: true},
			wantErr: "failed to reach desired state: mode is 0600, want 0644",
		},
		{
			name:    "write that does nothing fails verification",
			ignore:  map[string]bool{abi.CallFSWrite: true},
			wantErr: "failed to reach desired state: path is absent, want a regular file",
		},
		{
			name:    "write that lands other content fails verification",
			setup:   func(t *testing.T, _, p string) { writeFile(t, p, "old\n", 0o644) },
			ignore:  map[string]bool{abi.CallFSWrite: true},
			wantErr: "failed to reach desired state: sha256 is ",
		},
		{
			name:    "mkdir that does nothing fails verification",
			props:   func(p map[string]any) { p["ensure"] = "directory"; delete(p, "content") },
			ignore:  map[string]bool{abi.CallFSMkdir: true},
			wantErr: "failed to reach desired state: path is absent, want a directory",
		},
		{
			name:    "remove that does nothing fails verification",
			setup:   func(t *testing.T, _, p string) { writeFile(t, p, "x", 0o644) },
			props:   func(p map[string]any) { p["ensure"] = "absent" },
			ignore:  map[string]bool{abi.CallFSRemove: true},
			wantErr: "failed to reach desired state: path is a regular file, want absent",
		},
		{
			name:    "refused write names the path and the cause",
			fail:    map[string]*abi.CallError{abi.CallFSWrite: {Code: abi.CodeDenied, Message: "fs_write not granted"}},
			wantErr: "target: denied: fs_write not granted",
		},
		{
			name:    "failed stat names the path",
			fail:    map[string]*abi.CallError{abi.CallFSStat: {Code: abi.CodeDenied, Message: "fs_read not granted"}},
			wantErr: "reading the state of ",
		},
		{
			name:    "missing parent directory says to create it",
			name2:   func(dir string) string { return filepath.Join(dir, "missing", "target") },
			wantErr: "its parent directory DIR/missing must exist",
		},
		{
			name:    "invalid properties are reported, nothing is read",
			props:   func(p map[string]any) { p["mode"] = "9999" },
			fail:    map[string]*abi.CallError{abi.CallFSStat: {Code: abi.CodeIO, Message: "must not be called"}},
			wantErr: `invalid properties: mode "9999" must be 3 or 4 octal digits`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "target")
			if tc.name2 != nil {
				p = tc.name2(dir)
			}
			if tc.setup != nil {
				tc.setup(t, dir, p)
			}
			props := m.props(tc.props)
			h := &fakehost.Host{Info: info, Fail: tc.fail, Ignore: tc.ignore}
			res := newFileType().Apply(h, request(p, props, dir))
			wantError(t, res.Error, strings.ReplaceAll(tc.wantErr, "DIR", dir))
			if res.Changed {
				t.Fatalf("failed resource reported changed: %+v", res)
			}
		})
	}
}

func TestApplyRelativeSourceNeedsWorkingDir(t *testing.T) {
	m := current(t)
	dir := t.TempDir()
	props := m.props(func(p map[string]any) { delete(p, "content"); p["source"] = "rel.txt" })
	res := newFileType().Apply(&fakehost.Host{Info: info}, request(filepath.Join(dir, "t"), props, ""))
	wantError(t, res.Error, `source "rel.txt" is relative and the request has no working directory`)
}

func TestApplyNoopReportsAttributeChanges(t *testing.T) {
	m := current(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "t")
	writeFile(t, p, "hello\n", 0o600)
	req := request(p, m.props(nil), dir)
	req.Noop = true
	res := newFileType().Apply(&fakehost.Host{Info: info, ReadOnly: true}, req)
	if len(res.Messages) != 1 || res.Messages[0] != "mode 0600 -> 0644" {
		t.Fatalf("messages %q", res.Messages)
	}
	if res.FinalEnsure != "present" {
		t.Fatalf("noop final_ensure %q is not the observed state", res.FinalEnsure)
	}
}
