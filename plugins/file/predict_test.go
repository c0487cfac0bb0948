package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestNoopPredictions: noop fails a write the real run would fail, stays
// silent after another type's change, and counts directories an earlier
// noop resource would have created.
func TestNoopPredictions(t *testing.T) {
	m := current(t)
	dir := t.TempDir()
	noop := func(ft *fileType, name string, mod func(map[string]any), after bool) abi.Result {
		req := request(filepath.Join(dir, name), m.props(mod), dir)
		req.Noop, req.AfterChanges = true, after
		return ft.Apply(&fakehost.Host{Info: info, ReadOnly: true}, req)
	}
	ft := newFileType()
	if res := noop(ft, "a/f", nil, false); !strings.Contains(res.Error, "the real run would fail to write "+dir+"/a/f: its parent directory "+dir+"/a does not exist") {
		t.Errorf("missing parent: %+v", res)
	}
	if res := noop(ft, "a/f", nil, true); res.Error != "" || !res.Changed {
		t.Errorf("missing parent after another type's change: %+v", res)
	}
	if res := noop(ft, "a/b", func(p map[string]any) { delete(p, "content"); p["ensure"] = "directory" }, false); res.Error != "" || !res.Changed {
		t.Fatalf("directory: %+v", res)
	}
	for _, name := range []string{"a/f", "a/b/f"} {
		if res := noop(ft, name, nil, false); res.Error != "" || !res.Changed {
			t.Errorf("%s under a directory noop would create: %+v", name, res)
		}
	}
	res := noop(ft, "g", func(p map[string]any) { p["owner"] = "ccm-no-such-user"; p["group"] = "ccm-no-such-group" }, false)
	for _, want := range []string{`looking up owner "ccm-no-such-user"`, `looking up group "ccm-no-such-group"`} {
		if !strings.Contains(res.Error, want) {
			t.Errorf("unknown owner and group: error %q lacks %q", res.Error, want)
		}
	}
	if res := noop(ft, "g", func(p map[string]any) { p["owner"] = "ccm-no-such-user" }, true); res.Error != "" {
		t.Errorf("unknown owner after another type's change: %+v", res)
	}
}

// TestDiffOnlyWhenAsked: a noop content change carries a diff only when the
// host asks; show_diff false and HideDiff never read the old content.
func TestDiffOnlyWhenAsked(t *testing.T) {
	m := current(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "t")
	writeFile(t, p, "old secret\n", 0o644)
	run := func(diff, hide bool, mod func(map[string]any)) (abi.Result, *fakehost.Host) {
		req := request(p, m.props(mod), dir)
		req.Noop, req.Diff, req.HideDiff = true, diff, hide
		h := &fakehost.Host{Info: info, ReadOnly: true}
		return newFileType().Apply(h, req), h
	}
	if res, _ := run(false, false, nil); res.Diff != "" {
		t.Errorf("unasked diff %q", res.Diff)
	}
	if res, _ := run(true, false, nil); res.Diff != "--- "+p+"\n+++ "+p+"\n@@ -1 +1 @@\n-old secret\n+hello\n" {
		t.Errorf("diff %q", res.Diff)
	}
	for _, tc := range []struct {
		name string
		hide bool
		mod  func(map[string]any)
	}{
		{"show_diff false", false, func(p map[string]any) { p["show_diff"] = false }},
		{"HideDiff", true, nil},
	} {
		res, h := run(true, tc.hide, tc.mod)
		if res.Diff != hiddenDiff {
			t.Errorf("%s: diff %q", tc.name, res.Diff)
		}
		for _, c := range h.Calls() {
			if c == abi.CallFSRead {
				t.Errorf("%s: the old content was read", tc.name)
			}
		}
	}
}
