package main

// End-to-end tests of every file property through the real ccm binary and
// the real file plugin (docs/resources.md). The case
// runner below (e2eCase, runE2E) is shared with exec_e2e_test.go: a case lays
// out files, writes a manifest, runs `ccm apply --json` one or more times and
// checks the exit status, events and the files on disk; a case marked stable
// is applied once more and must change nothing.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// e2eCase is one scenario: files laid out by setup, then runs in order.
type e2eCase struct {
	name  string
	root  bool   // needs root (chown to another user); skipped otherwise
	bug   string // a known defect this case proves: skipped, with "BUG: " and this
	setup func(t *testing.T, dir string)
	runs  []e2eRun
	// stable: after the runs, the last manifest is applied again and must
	// exit 0 with nothing changed or failed, leaving the same files.
	stable bool
}

// e2eRun is one `ccm apply --json` and what it must produce. Strings may
// hold @DIR@ (the case's directory), @USER@, @GROUP@, @UID@ and @GID@.
type e2eRun struct {
	manifest string   // written before the run; "" keeps the previous one
	path     string   // manifest path relative to the case directory, default m.yaml
	args     []string // extra apply arguments, e.g. --noop
	env      []string // extra ccm process environment, "K=V"
	exit     int
	stderr   string // must appear in stderr
	events   []e2eEvent
	files    []e2eFile
	within   time.Duration // the ccm process must end within this, when set
	check    func(t *testing.T, dir string, out runOutput)
}

// e2eEvent is a subset match against the last event of ref.
type e2eEvent struct {
	ref      string
	outcome  string // failed, skipped, refreshed, changed, stable
	noop     string // the exact noop_message; also requires noop: true
	err      string // must appear in one of the event's errors
	info     string // must appear in one of the event's messages
	final    string // final_ensure
	checksum string // status.metadata.checksum must be sha256 of this text
	unmet    []string
}

// e2eFile is what must be on disk after a run, relative to the case
// directory. Files and directories must belong to the invoking user.
type e2eFile struct {
	path    string
	kind    string // file, dir, link, absent
	content *string
	mode    fs.FileMode // permission bits; 0 = not checked
}

// text is a content expectation.
func text(s string) *string { return &s }

func runE2E(t *testing.T, cases []e2eCase) {
	t.Helper()
	ccmtest.Binary(t) // build once, before the parallel cases race to do it
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.bug != "" {
				t.Skip("BUG: " + tc.bug)
			}
			if tc.root && os.Geteuid() != 0 {
				t.Skip("changing a file's owner to another user needs root")
			}
			dir := e2eDir(t)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			var last e2eRun
			for i, r := range tc.runs {
				if r.manifest == "" {
					r.manifest, r.path = last.manifest, last.path
				}
				e2eStep(t, dir, "run "+strconv.Itoa(i+1), r)
				last = r
			}
			if tc.stable {
				again := e2eRun{manifest: last.manifest, path: last.path, args: last.args, env: last.env, files: last.files}
				out := e2eStep(t, dir, "stability run", again)
				if out.Summary.Changed != 0 || out.Summary.Failed != 0 {
					t.Errorf("stability run: summary %+v, want nothing changed or failed", out.Summary)
					for _, e := range out.Events {
						t.Logf("  %s %s errors=%v messages=%v", e.Ref(), e.Outcome(), e.Error, e.Messages)
					}
				}
			}
		})
	}
}

// e2eDir is a fresh case directory. Unlike t.TempDir its name never holds
// the test's name, whose commas and spaces would need quoting in flow-style
// YAML such as `- @DIR@/f: {content: x}`.
func e2eDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ccm-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// e2eStep writes the manifest, runs ccm and checks everything r asks for.
func e2eStep(t *testing.T, dir, label string, r e2eRun) runOutput {
	t.Helper()
	if r.path == "" {
		r.path = "m.yaml"
	}
	writeManifest(t, dir, r.path, e2eExpand(t, dir, r.manifest))
	start := time.Now()
	res := ccmtest.Run(t, dir, r.env, append([]string{"apply", "--json", r.path}, r.args...)...)
	took := time.Since(start)
	var out runOutput
	if res.Code == 0 || res.Code == 1 {
		if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
			t.Fatalf("%s: decoding --json output: %v\nstdout:\n%s\nstderr:\n%s", label, err, res.Stdout, res.Stderr)
		}
	}
	if res.Code != r.exit {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", label, res.Code, r.exit, res.Stdout, res.Stderr)
	}
	if r.stderr != "" && !strings.Contains(res.Stderr, e2eExpand(t, dir, r.stderr)) {
		t.Errorf("%s: stderr does not mention %q:\n%s", label, e2eExpand(t, dir, r.stderr), res.Stderr)
	}
	if r.within > 0 && took > r.within {
		t.Errorf("%s: ccm took %v, want under %v", label, took.Round(time.Millisecond), r.within)
	}
	for _, want := range r.events {
		want.ref = e2eExpand(t, dir, want.ref)
		want.err = e2eExpand(t, dir, want.err)
		want.info = e2eExpand(t, dir, want.info)
		e2eCheckEvent(t, label, out, want)
	}
	for _, f := range r.files {
		if f.content != nil {
			f.content = text(e2eExpand(t, dir, *f.content))
		}
		e2eCheckFile(t, label, dir, f)
	}
	if r.check != nil {
		r.check(t, dir, out)
	}
	return out
}

// e2eExpand replaces the placeholders; @DIR@ is dir.
func e2eExpand(t *testing.T, dir, s string) string {
	t.Helper()
	u, g := me(t)
	return strings.NewReplacer(
		"@DIR@", dir, "@USER@", u, "@GROUP@", g,
		"@UID@", strconv.Itoa(os.Getuid()), "@GID@", strconv.Itoa(os.Getgid()),
	).Replace(s)
}

func e2eCheckEvent(t *testing.T, label string, out runOutput, want e2eEvent) {
	t.Helper()
	e := out.event(t, want.ref)
	where := label + ": " + want.ref
	if want.outcome != "" && e.Outcome() != want.outcome {
		t.Errorf("%s: outcome %s, want %s (errors %v, messages %v)", where, e.Outcome(), want.outcome, e.Error, e.Messages)
	}
	if want.noop != "" && (!e.Noop || e.NoopMessage != want.noop) {
		t.Errorf("%s: noop=%v noop_message %q, want %q", where, e.Noop, e.NoopMessage, want.noop)
	}
	if want.err != "" && !e2eAnyContains(e.Error, want.err) {
		t.Errorf("%s: errors %q do not mention %q", where, e.Error, want.err)
	}
	if want.info != "" && !e2eAnyContains(e.Messages, want.info) {
		t.Errorf("%s: messages %q do not mention %q", where, e.Messages, want.info)
	}
	if want.final != "" && e.FinalEnsure != want.final {
		t.Errorf("%s: final_ensure %q, want %q", where, e.FinalEnsure, want.final)
	}
	if want.checksum != "" {
		sum := sha256.Sum256([]byte(want.checksum))
		md, _ := e.Status["metadata"].(map[string]any)
		if got := md["checksum"]; got != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: status checksum %v, want sha256 of %q", where, got, want.checksum)
		}
	}
	if want.unmet != nil && strings.Join(e.UnmetRequirements, ",") != strings.Join(want.unmet, ",") {
		t.Errorf("%s: unmet_requirements %q, want %q", where, e.UnmetRequirements, want.unmet)
	}
}

func e2eAnyContains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func e2eCheckFile(t *testing.T, label, dir string, want e2eFile) {
	t.Helper()
	p := filepath.Join(dir, want.path)
	where := label + ": " + want.path
	st, err := os.Lstat(p)
	if want.kind == "absent" {
		if err == nil {
			t.Errorf("%s exists (%v), want absent", where, st.Mode())
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	kinds := map[string]bool{
		"file": st.Mode().IsRegular(),
		"dir":  st.IsDir(),
		"link": st.Mode()&fs.ModeSymlink != 0,
	}
	if !kinds[want.kind] {
		t.Errorf("%s is %v, want a %s", where, st.Mode().Type(), want.kind)
		return
	}
	if want.kind == "link" {
		return
	}
	if want.mode != 0 && st.Mode().Perm() != want.mode {
		t.Errorf("%s: mode %04o, want %04o", where, st.Mode().Perm(), want.mode)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && (int(sys.Uid) != os.Getuid() || int(sys.Gid) != os.Getgid()) {
		t.Errorf("%s: owned by %d:%d, want the invoking user %d:%d", where, sys.Uid, sys.Gid, os.Getuid(), os.Getgid())
	}
	if want.content != nil {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v", where, err)
		} else if string(b) != *want.content {
			t.Errorf("%s: content %q, want %q", where, b, *want.content)
		}
	}
}

// e2ePut writes a file with an exact mode (umask-proof), creating parents.
func e2ePut(t *testing.T, p, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// e2eMkdir creates a directory with an exact mode, creating parents.
func e2eMkdir(t *testing.T, p string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func e2eSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// fileManifest wraps file resource entries (already indented for a list
// item under `- file:`) in a manifest whose block defaults ownership to the
// invoking user.
func fileManifest(entries string) string {
	return "ccm:\n  resources:\n    - file:\n        - defaults: {owner: \"@USER@\", group: \"@GROUP@\", mode: \"0644\"}\n" + entries
}

func TestFileContent(t *testing.T) {
	runE2E(t, []e2eCase{
		{
			name: "block scalars are byte-exact (peer-note 2)",
			runs: []e2eRun{{
				manifest: fileManifest(`        - @DIR@/clip:
            content: |
              first line
                indented "double" 'single' {braces} $dollar \backslash
            
              after a blank line: ünïcode ✓	tab
        - @DIR@/strip:
            content: |-
              no final newline
              second
        - @DIR@/keep:
            content: |+
              kept blank lines

        - @DIR@/oneline:
            content: |
              Listen 8080
`),
				events: []e2eEvent{
					{ref: "file#@DIR@/clip", outcome: "changed", info: "created the file", final: "present",
						checksum: "first line\n  indented \"double\" 'single' {braces} $dollar \\backslash\n\nafter a blank line: ünïcode ✓\ttab\n"},
					{ref: "file#@DIR@/strip", outcome: "changed"},
					{ref: "file#@DIR@/keep", outcome: "changed"},
					{ref: "file#@DIR@/oneline", outcome: "changed"},
				},
				files: []e2eFile{
					{path: "clip", kind: "file", mode: 0o644, content: text("first line\n  indented \"double\" 'single' {braces} $dollar \\backslash\n\nafter a blank line: ünïcode ✓\ttab\n")},
					{path: "strip", kind: "file", content: text("no final newline\nsecond")},
					{path: "keep", kind: "file", content: text("kept blank lines\n\n")},
					{path: "oneline", kind: "file", content: text("Listen 8080\n")},
				},
			}},
			stable: true,
		},
		{
			name: "quoted x\\n and a\\nb (peer-note 2)",
			runs: []e2eRun{{
				manifest: fileManifest(`        - @DIR@/x: {content: "x\n"}
        - @DIR@/ab: {content: "a\nb"}
`),
				events: []e2eEvent{{ref: "file#@DIR@/x", outcome: "changed", checksum: "x\n"}},
				files: []e2eFile{
					{path: "x", kind: "file", content: text("x\n")},
					{path: "ab", kind: "file", content: text("a\nb")},
				},
			}},
			stable: true,
		},
		{
			name: "empty string is an explicit empty file",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/truncate", "old content\n", 0o644)
			},
			runs: []e2eRun{{
				manifest: fileManifest(`        - @DIR@/empty: {content: "", mode: "0640"}
        - @DIR@/truncate: {content: ""}
`),
				events: []e2eEvent{
					{ref: "file#@DIR@/empty", outcome: "changed", info: "created the file", checksum: ""},
					{ref: "file#@DIR@/truncate", outcome: "changed", checksum: ""},
				},
				files: []e2eFile{
					{path: "empty", kind: "file", mode: 0o640, content: text("")},
					{path: "truncate", kind: "file", mode: 0o644, content: text("")},
				},
			}},
			stable: true,
		},
		{
			name: "templated content is expanded just before the run",
			runs: []e2eRun{{
				manifest: "data:\n  who: world\n" + fileManifest(`        - @DIR@/hello: {content: "hello {{ Data.who }}\n"}
`),
				files: []e2eFile{{path: "hello", kind: "file", content: text("hello world\n")}},
			}},
			stable: true,
		},
		{
			name: "changed content is rewritten through a new inode and the checksum follows",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/f", "old\n", 0o644)
				// A hard link shares the old inode: an atomic rename leaves
				// it with the old bytes, an in-place write would not.
				if err := os.Link(dir+"/f", dir+"/f.hardlink"); err != nil {
					t.Fatal(err)
				}
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/f: {content: \"new\\n\"}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed", info: "changed the content", checksum: "new\n"}},
				files: []e2eFile{
					{path: "f", kind: "file", mode: 0o644, content: text("new\n")},
					{path: "f.hardlink", kind: "file", mode: 0o644, content: text("old\n")},
				},
			}},
			stable: true,
		},
		{
			name: "only the mode differs: fixed in place, content not rewritten",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/f", "same\n", 0o644)
				if err := os.Link(dir+"/f", dir+"/f.hardlink"); err != nil {
					t.Fatal(err)
				}
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/f: {content: \"same\\n\", mode: \"0600\"}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed", info: "mode 0644 -> 0600", checksum: "same\n"}},
				files: []e2eFile{
					{path: "f", kind: "file", mode: 0o600, content: text("same\n")},
					// Same inode: the chmod reached the hard link too.
					{path: "f.hardlink", kind: "file", mode: 0o600, content: text("same\n")},
				},
				check: func(t *testing.T, dir string, _ runOutput) {
					a, errA := os.Stat(dir + "/f")
					b, errB := os.Stat(dir + "/f.hardlink")
					if errA != nil || errB != nil || !os.SameFile(a, b) {
						t.Errorf("f was replaced (new inode) although only its mode differed")
					}
				},
			}},
			stable: true,
		},
		{
			name: "source is relative to the manifest directory and copied verbatim",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/sub/files/src.bin", "bin\x00ary\xff no final newline", 0o600)
				// A decoy at the same path relative to the working directory.
				e2ePut(t, dir+"/files/src.bin", "wrong: relative to the working directory", 0o644)
			},
			runs: []e2eRun{{
				path:     "sub/m.yaml",
				manifest: fileManifest("        - @DIR@/copy: {source: files/src.bin, mode: \"0640\"}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/copy", outcome: "changed", checksum: "bin\x00ary\xff no final newline"}},
				files:    []e2eFile{{path: "copy", kind: "file", mode: 0o640, content: text("bin\x00ary\xff no final newline")}},
			}},
			stable: true,
		},
		{
			name: "source change is copied again",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/src", "v2\n", 0o644)
				e2ePut(t, dir+"/copy", "v1\n", 0o644)
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/copy: {source: src}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/copy", outcome: "changed", checksum: "v2\n"}},
				files:    []e2eFile{{path: "copy", kind: "file", content: text("v2\n")}},
			}},
			stable: true,
		},
		{
			name: "missing source fails that resource only",
			runs: []e2eRun{{
				manifest: fileManifest(`        - @DIR@/copy: {source: nope}
        - @DIR@/after: {content: "ok\n"}
`),
				exit: 1,
				events: []e2eEvent{
					{ref: "file#@DIR@/copy", outcome: "failed", err: "does not exist"},
					{ref: "file#@DIR@/after", outcome: "changed"},
				},
				files: []e2eFile{{path: "copy", kind: "absent"}, {path: "after", kind: "file"}},
			}},
		},
		{
			name: "parent directory must exist",
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/missing/f: {content: \"x\"}\n"),
				exit:     1,
				events:   []e2eEvent{{ref: "file#@DIR@/missing/f", outcome: "failed", err: "parent directory"}},
				files:    []e2eFile{{path: "missing", kind: "absent"}},
			}},
		},
		{
			name: "present where a directory is fails",
			setup: func(t *testing.T, dir string) {
				e2eMkdir(t, dir+"/d", 0o755)
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/d: {content: \"x\"}\n"),
				exit:     1,
				events:   []e2eEvent{{ref: "file#@DIR@/d", outcome: "failed", err: "exists as a directory"}},
				files:    []e2eFile{{path: "d", kind: "dir"}},
			}},
		},
	})
}

func TestFileAttributes(t *testing.T) {
	runE2E(t, []e2eCase{
		{
			name: "attribute-only keeps the content and changes only the mode",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/f", "keep me\n", 0o644)
				if err := os.Link(dir+"/f", dir+"/f.hardlink"); err != nil {
					t.Fatal(err)
				}
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/f: {mode: \"0600\"}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed", info: "mode 0644 -> 0600", final: "present"}},
				files: []e2eFile{
					{path: "f", kind: "file", mode: 0o600, content: text("keep me\n")},
					{path: "f.hardlink", kind: "file", mode: 0o600, content: text("keep me\n")},
				},
			}},
			stable: true,
		},
		{
			name: "attribute-only creates a missing file empty",
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/f: {mode: \"0604\"}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed", info: "created an empty file with requested attributes"}},
				files:    []e2eFile{{path: "f", kind: "file", mode: 0o604, content: text("")}},
			}},
			stable: true,
		},
		{
			name: "owner and group by numeric id",
			runs: []e2eRun{{
				manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/f: {content: \"x\", owner: \"@UID@\", group: \"@GID@\", mode: \"0644\"}\n",
				events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed"}},
				files:    []e2eFile{{path: "f", kind: "file", content: text("x")}},
			}},
			stable: true,
		},
		{
			name: "a file made by name is stable when managed by id, and back",
			runs: []e2eRun{
				{
					manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/f: {content: \"x\", owner: \"@USER@\", group: \"@GROUP@\", mode: \"0644\"}\n",
					events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed"}},
				},
				{
					manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/f: {content: \"x\", owner: \"@UID@\", group: \"@GID@\", mode: \"0644\"}\n",
					events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "stable"}},
				},
				{
					manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/f: {content: \"x\", owner: \"@USER@\", group: \"@GID@\", mode: \"0644\"}\n",
					events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "stable"}},
					files:    []e2eFile{{path: "f", kind: "file", content: text("x")}},
				},
			},
		},
		{
			name: "owner drift is fixed in place",
			root: true,
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/f", "x", 0o644)
				if err := os.Chown(dir+"/f", 65534, 65534); err != nil {
					t.Fatal(err)
				}
				if err := os.Link(dir+"/f", dir+"/f.hardlink"); err != nil {
					t.Fatal(err)
				}
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/f: {content: \"x\"}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed", info: "updated attributes"}},
				files: []e2eFile{
					{path: "f", kind: "file", mode: 0o644, content: text("x")},
					{path: "f.hardlink", kind: "file", content: text("x")}, // same inode, now ours
				},
			}},
			stable: true,
		},
		{
			name: "mode 600, 0600 and 0o600 are one mode (peer-note 11)",
			runs: []e2eRun{
				{
					manifest: fileManifest("        - @DIR@/f: {content: \"x\", mode: \"600\"}\n"),
					events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed"}},
					files:    []e2eFile{{path: "f", kind: "file", mode: 0o600}},
				},
				{
					// CCM compared "0600" with "600" as strings and failed every run.
					events: []e2eEvent{{ref: "file#@DIR@/f", outcome: "stable"}},
				},
				{
					manifest: fileManifest("        - @DIR@/f: {content: \"x\", mode: \"0600\"}\n"),
					events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "stable"}},
				},
				{
					manifest: fileManifest("        - @DIR@/f: {content: \"x\", mode: \"0o600\"}\n"),
					events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "stable"}},
					files:    []e2eFile{{path: "f", kind: "file", mode: 0o600}},
				},
			},
		},
		{
			name: "mode is set exactly whatever the umask",
			runs: []e2eRun{{
				manifest: fileManifest(`        - @DIR@/open: {content: "x", mode: "0777"}
        - @DIR@/closed: {content: "x", mode: "000"}
`),
				files: []e2eFile{{path: "open", kind: "file", mode: 0o777}, {path: "closed", kind: "file"}},
				check: func(t *testing.T, dir string, _ runOutput) {
					st, err := os.Stat(dir + "/closed")
					if err != nil || st.Mode().Perm() != 0 {
						t.Errorf("closed: %v %v, want mode 0000", st.Mode(), err)
					}
				},
			}},
			stable: true,
		},
	})
}

func TestFileDirectory(t *testing.T) {
	runE2E(t, []e2eCase{
		{
			name: "created with parents; read or write bits get execute: 0644, 0600, 640",
			runs: []e2eRun{{
				manifest: fileManifest(`        - @DIR@/a/b/c: {ensure: directory}
        - @DIR@/private: {ensure: directory, mode: "0600"}
        - @DIR@/shared: {ensure: directory, mode: "640"}
`),
				events: []e2eEvent{{ref: "file#@DIR@/a/b/c", outcome: "changed", info: "created directory", final: "directory"}},
				files: []e2eFile{
					{path: "a", kind: "dir"}, {path: "a/b", kind: "dir"}, {path: "a/b/c", kind: "dir", mode: 0o755},
					{path: "private", kind: "dir", mode: 0o700}, {path: "shared", kind: "dir", mode: 0o750},
				},
			}},
			stable: true,
		},
		{
			name: "an existing directory gets only its attributes fixed",
			setup: func(t *testing.T, dir string) {
				e2eMkdir(t, dir+"/d", 0o700)
				e2ePut(t, dir+"/d/inside", "untouched\n", 0o600)
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/d: {ensure: directory}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/d", outcome: "changed", info: "mode 0700 -> 0755"}},
				files:    []e2eFile{{path: "d", kind: "dir", mode: 0o755}, {path: "d/inside", kind: "file", mode: 0o600, content: text("untouched\n")}},
			}},
			stable: true,
		},
		{
			name: "a file where the directory should be fails",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/d", "a file\n", 0o644)
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/d: {ensure: directory}\n"),
				exit:     1,
				events:   []e2eEvent{{ref: "file#@DIR@/d", outcome: "failed", err: "exists as"}},
				files:    []e2eFile{{path: "d", kind: "file", content: text("a file\n")}},
			}},
		},
	})
}

func TestFileAbsent(t *testing.T) {
	runE2E(t, []e2eCase{
		{
			name: "a file is removed",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/f", "x", 0o644)
			},
			runs: []e2eRun{{
				manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/f: {ensure: absent}\n",
				events:   []e2eEvent{{ref: "file#@DIR@/f", outcome: "changed", info: "removed the file", final: "absent"}},
				files:    []e2eFile{{path: "f", kind: "absent"}},
			}},
			stable: true,
		},
		{
			name: "a missing path is stable",
			runs: []e2eRun{{
				manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/never: {ensure: absent}\n",
				events:   []e2eEvent{{ref: "file#@DIR@/never", outcome: "stable", final: "absent"}},
			}},
		},
		{
			name: "an empty directory is removed",
			setup: func(t *testing.T, dir string) {
				e2eMkdir(t, dir+"/d", 0o755)
			},
			runs: []e2eRun{{
				manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/d: {ensure: absent}\n",
				events:   []e2eEvent{{ref: "file#@DIR@/d", outcome: "changed", info: "removed the directory"}},
				files:    []e2eFile{{path: "d", kind: "absent"}},
			}},
			stable: true,
		},
		{
			name: "a non-empty directory without force fails and is kept",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/d/keep", "x", 0o644)
			},
			runs: []e2eRun{{
				manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/d: {ensure: absent}\n",
				exit:     1,
				events:   []e2eEvent{{ref: "file#@DIR@/d", outcome: "failed", err: "force: true"}},
				files:    []e2eFile{{path: "d/keep", kind: "file", content: text("x")}},
			}},
		},
		{
			name: "force removes a tree without following its symlinks",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/d/sub/f", "x", 0o644)
				e2ePut(t, dir+"/outside/precious", "keep\n", 0o644)
				e2eSymlink(t, dir+"/outside", dir+"/d/sub/link-to-outside")
			},
			runs: []e2eRun{{
				manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/d: {ensure: absent, force: true}\n",
				events:   []e2eEvent{{ref: "file#@DIR@/d", outcome: "changed", info: "recursively removed the directory"}},
				files:    []e2eFile{{path: "d", kind: "absent"}, {path: "outside/precious", kind: "file", content: text("keep\n")}},
			}},
			stable: true,
		},
		{
			name: "a symlink to a directory: only the link goes",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/target/f", "x", 0o644)
				e2eSymlink(t, dir+"/target", dir+"/link")
			},
			runs: []e2eRun{{
				manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/link: {ensure: absent}\n",
				events:   []e2eEvent{{ref: "file#@DIR@/link", outcome: "changed", info: "removed the file"}},
				files:    []e2eFile{{path: "link", kind: "absent"}, {path: "target/f", kind: "file", content: text("x")}},
			}},
			stable: true,
		},
	})
}

func TestFileSymlinks(t *testing.T) {
	runE2E(t, []e2eCase{
		{
			name: "attribute-only refuses a symlink and leaves its target alone",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/target", "target\n", 0o644)
				e2eSymlink(t, "target", dir+"/link")
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/link: {mode: \"0600\"}\n"),
				exit:     1,
				events:   []e2eEvent{{ref: "file#@DIR@/link", outcome: "failed", err: "symlink"}},
				files:    []e2eFile{{path: "link", kind: "link"}, {path: "target", kind: "file", mode: 0o644, content: text("target\n")}},
			}},
		},
		{
			name: "content replaces the link, not its target",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/target", "target\n", 0o644)
				e2eSymlink(t, "target", dir+"/link")
			},
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/link: {content: \"new\\n\", mode: \"0600\"}\n"),
				events:   []e2eEvent{{ref: "file#@DIR@/link", outcome: "changed", checksum: "new\n"}},
				files:    []e2eFile{{path: "link", kind: "file", mode: 0o600, content: text("new\n")}, {path: "target", kind: "file", mode: 0o644, content: text("target\n")}},
			}},
			stable: true,
		},
	})
}

func TestFileNoopMessages(t *testing.T) {
	setup := func(t *testing.T, dir string) {
		e2ePut(t, dir+"/attrs", "x", 0o600)
		e2ePut(t, dir+"/remove-file", "x", 0o644)
		e2eMkdir(t, dir+"/remove-dir", 0o755)
		e2ePut(t, dir+"/remove-tree/f", "x", 0o644)
	}
	noop := e2eRun{
		manifest: fileManifest(`        - @DIR@/create: {content: "x"}
        - @DIR@/create-empty: {}
        - @DIR@/attrs: {}
        - @DIR@/mkdir: {ensure: directory}
        - @DIR@/remove-file: {ensure: absent}
        - @DIR@/remove-dir: {ensure: absent}
        - @DIR@/remove-tree: {ensure: absent, force: true}
        - @DIR@/stable-absent: {ensure: absent}
`),
		args: []string{"--noop"},
		events: []e2eEvent{
			{ref: "file#@DIR@/create", outcome: "changed", noop: "Would have created the file"},
			{ref: "file#@DIR@/create-empty", outcome: "changed", noop: "Would have created an empty file with requested attributes"},
			{ref: "file#@DIR@/attrs", outcome: "changed", noop: "Would have updated attributes", info: "mode 0600 -> 0644"},
			{ref: "file#@DIR@/mkdir", outcome: "changed", noop: "Would have created directory"},
			{ref: "file#@DIR@/remove-file", outcome: "changed", noop: "Would have removed the file"},
			{ref: "file#@DIR@/remove-dir", outcome: "changed", noop: "Would have removed the directory"},
			{ref: "file#@DIR@/remove-tree", outcome: "changed", noop: "Would have recursively removed the directory"},
			{ref: "file#@DIR@/stable-absent", outcome: "stable"},
		},
		files: []e2eFile{
			{path: "create", kind: "absent"},
			{path: "create-empty", kind: "absent"},
			{path: "attrs", kind: "file", mode: 0o600},
			{path: "mkdir", kind: "absent"},
			{path: "remove-file", kind: "file"},
			{path: "remove-dir", kind: "dir"},
			{path: "remove-tree/f", kind: "file"},
		},
	}
	runE2E(t, []e2eCase{{name: "one message per action, nothing changed", setup: setup, runs: []e2eRun{noop}}})
}

// TestFileValidation: static errors stop the run at load with exit 2 before
// anything changes, all reported at once with file, line and type#name
// (docs/decisions.md), although a valid resource that would create
// @DIR@/first comes before them.
func TestFileValidation(t *testing.T) {
	tests := []struct {
		name  string
		entry string // one file entry, the YAML flow map after "- "
		err   string
	}{
		{"relative name", `rel/f: {content: "x"}`, `file#rel/f: name "rel/f" must be an absolute path`},
		{"trailing slash", `@DIR@/slash/: {content: "x"}`, `file#@DIR@/slash/: name "@DIR@/slash/" is not canonical; use "@DIR@/slash"`},
		{"dot-dot in name", `@DIR@/x/../dots: {content: "x"}`, `file#@DIR@/x/../dots: name "@DIR@/x/../dots" is not canonical`},
		{"content and source", `@DIR@/both: {content: "x", source: src}`, "file#@DIR@/both: content and source are mutually exclusive"},
		{"mode 1777", `@DIR@/sticky: {content: "x", mode: "1777"}`, `file#@DIR@/sticky: mode "1777" is above 0777`},
		{"unquoted mode", `@DIR@/unquoted: {content: "x", mode: 0644}`, `file#@DIR@/unquoted: property "mode": must be a string, got an integer (a quoted octal string such as "0644")`},
		{"typo contnet (peer-note 4)", `@DIR@/typo: {contnet: "x"}`, `file#@DIR@/typo: unknown property "contnet"; did you mean "content"?`},
		{"force without absent", `@DIR@/force: {content: "x", force: true}`, "file#@DIR@/force: force is only valid with ensure absent"},
		{"unknown ensure", `@DIR@/link: {ensure: link}`, `file#@DIR@/link: ensure "link" is not valid for file`},
		{"content with directory", `@DIR@/dir: {ensure: directory, content: "x"}`, "file#@DIR@/dir: content and source are only valid with ensure present"},
	}
	var b strings.Builder
	b.WriteString(fileManifest("        - @DIR@/first: {content: \"x\"}\n"))
	for _, tt := range tests {
		b.WriteString("        - " + tt.entry + "\n")
	}
	dir := e2eDir(t)
	writeManifest(t, dir, "m.yaml", e2eExpand(t, dir, b.String()))
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml")
	if res.Code != 2 {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Line 4 holds the defaults, 5 the valid entry, 6 the first bad one.
			want := "m.yaml:" + strconv.Itoa(6+i) + ": " + e2eExpand(t, dir, tt.err)
			if !strings.Contains(res.Stderr, want) {
				t.Errorf("stderr does not say %q:\n%s", want, res.Stderr)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the failed load left files behind: %v", entries)
	}
}
