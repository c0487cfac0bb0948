package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestWriteParts(t *testing.T) {
	dir := t.TempDir()
	d := NewTestDispatcher()
	info := abi.PluginInfo{Type: "t", Capabilities: abi.Capabilities{FSWrite: []string{"/**"}}}
	call := func(mode trust.Mode, grants trust.Chain, req abi.FSWriteRequest) *abi.CallError {
		return d.Call(context.Background(), TestCall{Caller: trust.Caller{Mode: mode, Grants: grants}, Info: info}, abi.CallFSWrite, req).Error
	}
	target := filepath.Join(dir, "big")
	os.WriteFile(target, []byte("old"), 0o644)
	for i, part := range []string{"first", "next", "last"} {
		if cerr := call(trust.ModeApply, nil, abi.FSWriteRequest{Path: target, Part: part, Content: []byte(strings.Repeat(string(rune('a'+i)), 3)), Mode: 0o640}); cerr != nil {
			t.Fatalf("%s: %v", part, cerr)
		}
		if part != "last" {
			if b, _ := os.ReadFile(target); string(b) != "old" {
				t.Fatalf("after %s the target is %q: it must change only at the last part", part, b)
			}
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "aaabbbccc" {
		t.Fatalf("target %q", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}

	if cerr := call(trust.ModeApply, nil, abi.FSWriteRequest{Path: target, Part: "next", Content: []byte("x"), Mode: 0o644}); cerr == nil || !strings.Contains(cerr.Message, "without a first part") {
		t.Fatalf("next without first: %v", cerr)
	}
	// A staging file swapped for a hard link to another file between parts
	// is refused, and that file is untouched.
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("secret"), 0o600)
	if cerr := call(trust.ModeApply, nil, abi.FSWriteRequest{Path: target, Part: "first", Content: []byte("x"), Mode: 0o644}); cerr != nil {
		t.Fatal(cerr)
	}
	staging := filepath.Join(dir, ".big.ccm-part")
	os.Remove(staging)
	if err := os.Link(victim, staging); err != nil {
		t.Fatal(err)
	}
	if cerr := call(trust.ModeApply, nil, abi.FSWriteRequest{Path: target, Part: "last", Content: []byte("evil"), Mode: 0o644}); cerr == nil || !strings.Contains(cerr.Message, "not the one the first part") {
		t.Fatalf("swapped staging file: %v", cerr)
	}
	if b, _ := os.ReadFile(victim); string(b) != "secret" {
		t.Fatalf("victim %q", b)
	}
	for _, r := range []struct {
		name   string
		mode   trust.Mode
		grants trust.Chain
		req    abi.FSWriteRequest
		want   string
	}{
		{"noop", trust.ModeNoop, nil, abi.FSWriteRequest{Path: target, Part: "first", Mode: 0o644}, "read-only"},
		{"outside the grant", trust.ModeApply, trust.Chain{{FSWrite: []string{"/nowhere/**"}}}, abi.FSWriteRequest{Path: target, Part: "first", Mode: 0o644}, "fs_write not granted"},
		{"bad part", trust.ModeApply, nil, abi.FSWriteRequest{Path: target, Part: "middle", Mode: 0o644}, "not first, next or last"},
		{"with a source", trust.ModeApply, nil, abi.FSWriteRequest{Path: target, Part: "first", Source: victim, Mode: 0o644}, "cannot copy a source"},
	} {
		t.Run(r.name, func(t *testing.T) {
			if cerr := call(r.mode, r.grants, r.req); cerr == nil || !strings.Contains(cerr.Message, r.want) {
				t.Fatalf("got %v, want %q", cerr, r.want)
			}
		})
	}
}
