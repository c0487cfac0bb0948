package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestStableApplyHostCalls pins the performance contract: a stable file costs
// one stat (with a host-side checksum); lookups only when a name must be
// resolved, once per instance.
func TestStableApplyHostCalls(t *testing.T) {
	m := current(t)
	cases := []struct {
		name  string
		root  bool
		setup func(t *testing.T, dir, p string)
		props func(p map[string]any)
		want  []string
	}{
		{
			name:  "content, names equal to stat's",
			setup: func(t *testing.T, _, p string) { writeFile(t, p, "hello\n", 0o644) },
			want:  []string{abi.CallFSStat},
		},
		{
			name:  "content, numeric ids",
			setup: func(t *testing.T, _, p string) { writeFile(t, p, "hello\n", 0o644) },
			props: func(p map[string]any) { p["owner"] = itoa(m.uid); p["group"] = itoa(m.gid) },
			want:  []string{abi.CallFSStat},
		},
		{
			name:  "attribute-only",
			setup: func(t *testing.T, _, p string) { writeFile(t, p, "x", 0o644) },
			props: func(p map[string]any) { delete(p, "content") },
			want:  []string{abi.CallFSStat},
		},
		{
			name:  "directory",
			setup: func(t *testing.T, _, p string) { mkdir(t, p, 0o755) },
			props: func(p map[string]any) { p["ensure"] = "directory"; delete(p, "content") },
			want:  []string{abi.CallFSStat},
		},
		{
			name:  "absent",
			props: func(p map[string]any) { p["ensure"] = "absent" },
			want:  []string{abi.CallFSStat},
		},
		{
			name: "source adds the source's stat",
			setup: func(t *testing.T, dir, p string) {
				writeFile(t, filepath.Join(dir, "s"), "hello\n", 0o644)
				writeFile(t, p, "hello\n", 0o644)
			},
			props: func(p map[string]any) { delete(p, "content"); p["source"] = "s" },
			want:  []string{abi.CallFSStat, abi.CallFSStat},
		},
		{
			name:  "names that differ from stat's are looked up",
			root:  true,
			setup: func(t *testing.T, _, p string) { writeFile(t, p, "hello\n", 0o644); chown(t, p, "daemon", "daemon") },
			props: func(p map[string]any) { p["owner"] = itoa(lookupUID(t, "daemon")); p["group"] = "daemon" },
			want:  []string{abi.CallFSStat},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root {
				needRoot(t)
			}
			dir := t.TempDir()
			p := filepath.Join(dir, "target")
			if tc.setup != nil {
				tc.setup(t, dir, p)
			}
			h := &fakehost.Host{Info: info}
			res := newFileType().Apply(h, request(p, m.props(tc.props), dir))
			if res.Error != "" || res.Changed {
				t.Fatalf("not stable: %+v", res)
			}
			if got := h.Calls(); !slices.Equal(got, tc.want) {
				t.Fatalf("host calls %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLookupsAreCachedPerInstance: the host reuses one instance for every
// file resource of a run, so a name is resolved once.
func TestLookupsAreCachedPerInstance(t *testing.T) {
	needRoot(t)
	m := current(t)
	dir := t.TempDir()
	ft := newFileType()
	h := &fakehost.Host{Info: info, ReadOnly: true}
	for _, n := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, n)
		writeFile(t, p, "hello\n", 0o644)
		chown(t, p, "root", "root")
		req := request(p, m.props(func(p map[string]any) { p["owner"] = "daemon"; p["group"] = "daemon" }), dir)
		req.Noop = true
		if res := ft.Apply(h, req); res.NoopMessage != "Would have updated attributes" {
			t.Fatalf("%s: %+v", n, res)
		}
	}
	if u, g := h.Count(abi.CallUserLookup), h.Count(abi.CallGroupLookup); u != 1 || g != 1 {
		t.Fatalf("user lookups %d, group lookups %d; want 1 each", u, g)
	}
}

// TestFailedLookupIsNotCached: a later resource may create the user.
func TestFailedLookupIsNotCached(t *testing.T) {
	m := current(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "t")
	writeFile(t, p, "hello\n", 0o644)
	ft := newFileType()
	h := &fakehost.Host{Info: info}
	req := request(p, m.props(func(p map[string]any) { p["owner"] = "no-such-user-ccm" }), dir)
	for range 2 {
		if res := ft.Apply(h, req); res.Error == "" {
			t.Fatal("want an error for an unknown user")
		}
	}
	if n := h.Count(abi.CallUserLookup); n != 2 {
		t.Fatalf("user lookups %d, want 2", n)
	}
}

// TestNoStateSkipsTheStateDocument: the host asks for no state document when
// nothing reads it (no --json, no session); the decision and the observed
// ensure are the same either way, and a changed file still reports its state
// when asked.
func TestNoStateSkipsTheStateDocument(t *testing.T) {
	m := current(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "target")
	for i, noState := range []bool{true, false, true, false} {
		req := request(p, m.props(nil), dir)
		req.NoState = noState
		res := newFileType().Apply(&fakehost.Host{Info: info}, req)
		if res.Error != "" || res.Changed != (i == 0) || res.FinalEnsure != "present" {
			t.Fatalf("run %d (no_state %v): %+v", i, noState, res)
		}
		if noState != (res.State == nil) {
			t.Fatalf("run %d: no_state %v but state %v", i, noState, res.State)
		}
	}
}
