package main

import (
	"path/filepath"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// decisionRow is one row of the decision table of docs/resources.md, run
// twice: once in noop on a read-only host (must decide the same and mutate
// nothing) and once for real (must act, verify, and be stable on re-run).
type decisionRow struct {
	name  string
	root  bool                                    // chowns to another user
	setup func(t *testing.T, m me, dir, p string) // initial state at p
	props func(m me, p map[string]any)            // changes to the default props
	// noop is the expected noop message; "" means stable.
	noop    string
	wantErr string // expected error (noop and real run)
	final   string // final_ensure after the real run
	check   func(t *testing.T, m me, dir, p string)
}

func decisionRows() []decisionRow {
	return []decisionRow{
		{
			name:  "present: missing file is created",
			noop:  "Would have created the file",
			final: "present",
			check: func(t *testing.T, m me, _, p string) {
				wantFile(t, p, attrs{content: str("hello\n"), mode: 0o644, uid: m.uid, gid: m.gid})
			},
		},
		{
			name:  "present: same content and attributes is stable",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "hello\n", 0o644) },
			final: "present",
		},
		{
			name:  "present: different content is rewritten",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "old\n", 0o644) },
			noop:  "Would have changed the content",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{content: str("hello\n"), mode: 0o644, uid: -1, gid: -1})
			},
		},
		{
			name:  "present: empty content writes an empty file",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "old\n", 0o644) },
			props: func(_ me, p map[string]any) { p["content"] = "" },
			noop:  "Would have changed the content",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{content: str(""), mode: 0o644, uid: -1, gid: -1})
			},
		},
		{
			name:  "present: only mode differs is fixed in place",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "hello\n", 0o600) },
			noop:  "Would have updated attributes",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{content: str("hello\n"), mode: 0o644, uid: -1, gid: -1})
			},
		},
		{
			name:  "present: three digit mode converges",
			props: func(_ me, p map[string]any) { p["mode"] = "600" },
			noop:  "Would have created the file",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) { wantFile(t, p, attrs{mode: 0o600, uid: -1, gid: -1}) },
		},
		{
			name:  "present: 0o prefixed mode",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "hello\n", 0o644) },
			props: func(_ me, p map[string]any) { p["mode"] = "0o640" },
			noop:  "Would have updated attributes",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) { wantFile(t, p, attrs{mode: 0o640, uid: -1, gid: -1}) },
		},
		{
			name:  "present: numeric owner and group equal the named ones",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "hello\n", 0o644) },
			props: func(m me, p map[string]any) { p["owner"] = itoa(m.uid); p["group"] = float64(m.gid) },
			final: "present",
		},
		{
			name:  "present: owner and group differ are chowned in place",
			root:  true,
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "hello\n", 0o644); chown(t, p, "root", "root") },
			props: func(_ me, p map[string]any) { p["owner"] = "daemon"; p["group"] = "daemon" },
			noop:  "Would have updated attributes",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{content: str("hello\n"), mode: 0o644, uid: lookupUID(t, "daemon"), gid: lookupGID(t, "daemon")})
			},
		},
		{
			name:  "present: new file gets a named owner",
			root:  true,
			props: func(_ me, p map[string]any) { p["owner"] = "daemon"; p["group"] = "root" },
			noop:  "Would have created the file",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{content: str("hello\n"), mode: 0o644, uid: lookupUID(t, "daemon"), gid: 0})
			},
		},
		{
			name:  "present: attribute-only creates an empty file",
			props: func(_ me, p map[string]any) { delete(p, "content") },
			noop:  "Would have created an empty file with requested attributes",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{content: str(""), mode: 0o644, uid: -1, gid: -1})
			},
		},
		{
			name:  "present: attribute-only with null content fixes mode and keeps content",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "keep me\n", 0o600) },
			props: func(_ me, p map[string]any) { p["content"] = nil },
			noop:  "Would have updated attributes",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{content: str("keep me\n"), mode: 0o644, uid: -1, gid: -1})
			},
		},
		{
			name:  "present: attribute-only on existing matching file is stable",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "anything\n", 0o644) },
			props: func(_ me, p map[string]any) { delete(p, "content") },
			final: "present",
		},
		{
			name: "present: attribute-only refuses a symlink",
			setup: func(t *testing.T, _ me, dir, p string) {
				writeFile(t, filepath.Join(dir, "real"), "x", 0o600)
				symlink(t, filepath.Join(dir, "real"), p)
			},
			props:   func(_ me, p map[string]any) { delete(p, "content") },
			wantErr: "is a symlink to",
		},
		{
			name: "present: content replaces a symlink, not its target",
			setup: func(t *testing.T, _ me, dir, p string) {
				writeFile(t, filepath.Join(dir, "real"), "target\n", 0o600)
				symlink(t, filepath.Join(dir, "real"), p)
			},
			noop:  "Would have replaced the symlink with a regular file",
			final: "present",
			check: func(t *testing.T, _ me, dir, p string) {
				wantFile(t, p, attrs{content: str("hello\n"), mode: 0o644, uid: -1, gid: -1})
				wantFile(t, filepath.Join(dir, "real"), attrs{content: str("target\n"), mode: 0o600, uid: -1, gid: -1})
			},
		},
		{
			name:    "present: a directory at the path is an error",
			setup:   func(t *testing.T, _ me, _, p string) { mkdir(t, p, 0o755) },
			wantErr: "exists as a directory",
		},
		{
			name:    "present: attribute-only on a directory is an error",
			setup:   func(t *testing.T, _ me, _, p string) { mkdir(t, p, 0o755) },
			props:   func(_ me, p map[string]any) { delete(p, "content") },
			wantErr: "exists as a directory",
		},
		{
			name: "present: relative source resolves against the working dir",
			setup: func(t *testing.T, _ me, dir, _ string) {
				writeFile(t, filepath.Join(dir, "src.txt"), "from source\n", 0o600)
			},
			props: func(_ me, p map[string]any) { delete(p, "content"); p["source"] = "src.txt" },
			noop:  "Would have created the file",
			final: "present",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{content: str("from source\n"), mode: 0o644, uid: -1, gid: -1})
			},
		},
		{
			name: "present: absolute source with same content is stable",
			setup: func(t *testing.T, _ me, dir, p string) {
				writeFile(t, filepath.Join(dir, "src.txt"), "same\n", 0o600)
				writeFile(t, p, "same\n", 0o644)
			},
			props: func(_ me, p map[string]any) { delete(p, "content"); p["source"] = "ABS/src.txt" },
			final: "present",
		},
		{
			name:    "present: missing source is an error",
			props:   func(_ me, p map[string]any) { delete(p, "content"); p["source"] = "nope.txt" },
			wantErr: "nope.txt does not exist",
		},
		{
			name:    "present: source that is a directory is an error",
			setup:   func(t *testing.T, _ me, dir, _ string) { mkdir(t, filepath.Join(dir, "srcdir"), 0o755) },
			props:   func(_ me, p map[string]any) { delete(p, "content"); p["source"] = "srcdir" },
			wantErr: "is a directory, not a regular file",
		},
		{
			name:    "present: unknown owner is an error",
			setup:   func(t *testing.T, _ me, _, p string) { writeFile(t, p, "hello\n", 0o644) },
			props:   func(_ me, p map[string]any) { p["owner"] = "no-such-user-ccm" },
			wantErr: `looking up owner "no-such-user-ccm"`,
		},
		{
			name:  "directory: missing is created with parents and x bits",
			props: func(_ me, p map[string]any) { p["ensure"] = "directory"; delete(p, "content"); p["name"] = "SUB" },
			noop:  "Would have created directory",
			final: "directory",
			check: func(t *testing.T, _ me, dir, _ string) {
				wantFile(t, filepath.Join(dir, "a", "b"), attrs{dir: true, mode: 0o755, uid: -1, gid: -1})
			},
		},
		{
			name:  "directory: wrong mode is fixed with x bits",
			setup: func(t *testing.T, _ me, _, p string) { mkdir(t, p, 0o700) },
			props: func(_ me, p map[string]any) { p["ensure"] = "directory"; delete(p, "content"); p["mode"] = "0640" },
			noop:  "Would have updated attributes",
			final: "directory",
			check: func(t *testing.T, _ me, _, p string) { wantFile(t, p, attrs{dir: true, mode: 0o750, uid: -1, gid: -1}) },
		},
		{
			name:  "directory: matching adjusted mode is stable",
			setup: func(t *testing.T, _ me, _, p string) { mkdir(t, p, 0o755) },
			props: func(_ me, p map[string]any) { p["ensure"] = "directory"; delete(p, "content") },
			final: "directory",
		},
		{
			name:  "directory: owner differs is chowned",
			root:  true,
			setup: func(t *testing.T, _ me, _, p string) { mkdir(t, p, 0o755); chown(t, p, "root", "root") },
			props: func(_ me, p map[string]any) {
				p["ensure"] = "directory"
				delete(p, "content")
				p["owner"] = "daemon"
				p["group"] = "root"
			},
			noop:  "Would have updated attributes",
			final: "directory",
			check: func(t *testing.T, _ me, _, p string) {
				wantFile(t, p, attrs{dir: true, mode: 0o755, uid: lookupUID(t, "daemon"), gid: 0})
			},
		},
		{
			name:    "directory: a file at the path is an error",
			setup:   func(t *testing.T, _ me, _, p string) { writeFile(t, p, "x", 0o644) },
			props:   func(_ me, p map[string]any) { p["ensure"] = "directory"; delete(p, "content") },
			wantErr: "exists as a regular file",
		},
		{
			name:  "absent: missing is stable",
			props: func(_ me, p map[string]any) { p["ensure"] = "absent" },
			final: "absent",
		},
		{
			name:  "absent: file is removed",
			setup: func(t *testing.T, _ me, _, p string) { writeFile(t, p, "x", 0o644) },
			props: func(_ me, p map[string]any) { p["ensure"] = "absent" },
			noop:  "Would have removed the file",
			final: "absent",
			check: func(t *testing.T, _ me, _, p string) { wantAbsent(t, p) },
		},
		{
			name: "absent: symlink to a directory removes only the link",
			setup: func(t *testing.T, _ me, dir, p string) {
				mkdir(t, filepath.Join(dir, "realdir"), 0o755)
				writeFile(t, filepath.Join(dir, "realdir", "keep"), "k", 0o644)
				symlink(t, filepath.Join(dir, "realdir"), p)
			},
			props: func(_ me, p map[string]any) { p["ensure"] = "absent"; p["force"] = true },
			noop:  "Would have removed the file",
			final: "absent",
			check: func(t *testing.T, _ me, dir, p string) {
				wantAbsent(t, p)
				wantFile(t, filepath.Join(dir, "realdir", "keep"), attrs{content: str("k"), mode: 0o644, uid: -1, gid: -1})
			},
		},
		{
			name:  "absent: empty directory is removed",
			setup: func(t *testing.T, _ me, _, p string) { mkdir(t, p, 0o755) },
			props: func(_ me, p map[string]any) { p["ensure"] = "absent" },
			noop:  "Would have removed the directory",
			final: "absent",
			check: func(t *testing.T, _ me, _, p string) { wantAbsent(t, p) },
		},
		{
			name: "absent: non-empty directory without force is an error",
			setup: func(t *testing.T, _ me, _, p string) {
				mkdir(t, p, 0o755)
				writeFile(t, filepath.Join(p, "f"), "x", 0o644)
			},
			props:   func(_ me, p map[string]any) { p["ensure"] = "absent" },
			wantErr: "set force: true",
		},
		{
			name: "absent: non-empty directory with force is removed recursively",
			setup: func(t *testing.T, _ me, _, p string) {
				mkdir(t, filepath.Join(p, "sub"), 0o755)
				writeFile(t, filepath.Join(p, "sub", "f"), "x", 0o644)
			},
			props: func(_ me, p map[string]any) { p["ensure"] = "absent"; p["force"] = true },
			noop:  "Would have recursively removed the directory",
			final: "absent",
			check: func(t *testing.T, _ me, _, p string) { wantAbsent(t, p) },
		},
	}
}

// resolve turns a row into a request in dir: name defaults to dir/target;
// "SUB" means dir/a/b; a source "ABS/x" becomes dir/x.
func resolve(row decisionRow, m me, dir string) (abi.Request, string) {
	p := m.props(nil)
	if row.props != nil {
		row.props(m, p)
	}
	name := filepath.Join(dir, "target")
	if p["name"] == "SUB" {
		name = filepath.Join(dir, "a", "b")
	}
	delete(p, "name")
	if src, ok := p["source"].(string); ok && len(src) > 4 && src[:4] == "ABS/" {
		p["source"] = filepath.Join(dir, src[4:])
	}
	return request(name, p, dir), name
}

func TestApplyDecisionTable(t *testing.T) {
	m := current(t)
	for _, row := range decisionRows() {
		t.Run(row.name, func(t *testing.T) {
			if row.root {
				needRoot(t)
			}
			t.Run("noop", func(t *testing.T) {
				dir := t.TempDir()
				req, p := resolve(row, m, dir)
				if row.setup != nil {
					row.setup(t, m, dir, p)
				}
				h := &fakehost.Host{Info: info, ReadOnly: true}
				req.Noop = true
				var res abi.Result
				noMutation(t, dir, h, func() { res = newFileType().Apply(h, req) })
				wantError(t, res.Error, row.wantErr)
				if row.wantErr != "" {
					return
				}
				if res.Changed != (row.noop != "") || res.NoopMessage != row.noop {
					t.Fatalf("noop: changed=%v message=%q, want message %q", res.Changed, res.NoopMessage, row.noop)
				}
			})
			t.Run("apply", func(t *testing.T) {
				dir := t.TempDir()
				req, p := resolve(row, m, dir)
				if row.setup != nil {
					row.setup(t, m, dir, p)
				}
				h := &fakehost.Host{Info: info}
				ft := newFileType()
				res := ft.Apply(h, req)
				wantError(t, res.Error, row.wantErr)
				if row.wantErr != "" {
					if res.Changed {
						t.Fatalf("a failed resource reported changed")
					}
					return
				}
				if res.Changed != (row.noop != "") || res.NoopMessage != "" {
					t.Fatalf("apply: changed=%v noop message %q; want changed=%v", res.Changed, res.NoopMessage, row.noop != "")
				}
				if res.FinalEnsure != row.final || res.Provider != "posix" {
					t.Fatalf("final_ensure %q provider %q, want %q posix", res.FinalEnsure, res.Provider, row.final)
				}
				if row.check != nil {
					row.check(t, m, dir, p)
				}
				h.Reset()
				again := ft.Apply(h, req)
				if again.Error != "" || again.Changed || len(h.Mutations()) > 0 {
					t.Fatalf("second run not stable: %+v, mutations %v", again, h.Mutations())
				}
			})
		})
	}
}
