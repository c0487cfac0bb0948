package main

// End-to-end tests of honest runs (issue 11): --noop shows the diff of a
// content change and says what would change, hides secrets, and fails a
// resource the real run would fail to apply, through the real ccm binary.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/internal/testing/fstree"
)

// honestGolden compares got with testdata/honest/name (refresh with -update).
func honestGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", "honest", name)
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("output differs from %s (run with -update after checking it):\n%s", golden, got)
	}
}

var runtimeKV = regexp.MustCompile(`runtime=\S+`)

// normalise makes text output comparable: the case directory becomes
// @DIR@ and timings go.
func normalise(dir, out string) string {
	return runtimeKV.ReplaceAllString(strings.ReplaceAll(out, dir, "@DIR@"), "runtime=X")
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil { // whatever the umask
			t.Fatal(err)
		}
	}
}

const honestDiffManifest = `ccm:
  resources:
    - file:
        - @DIR@/motd:
            content: "Welcome\nto ccm\non host b\n"
            owner: @USER@
            group: @GROUP@
            mode: "0600"
        - @DIR@/new.conf:
            content: "port = 8080\n"
            owner: @USER@
            group: @GROUP@
            mode: "0644"
        - @DIR@/secret:
            content: "NEW-SECRET\n"
            owner: @USER@
            group: @GROUP@
            mode: "0644"
            show_diff: false
        - @DIR@/blob:
            content: "a\u0000b"
            owner: @USER@
            group: @GROUP@
            mode: "0644"
        - @DIR@/tty:
            content: "clear \u001b[2J here\n"
            owner: @USER@
            group: @GROUP@
            mode: "0644"
`

// TestHonestNoopDiffGolden: a content change of an existing file shows a
// unified diff and the mode change; a new file shows its content; a
// show_diff: false file shows neither its old nor its new content; binary
// content is summarised; control characters are escaped. Nothing changes.
func TestHonestNoopDiffGolden(t *testing.T) {
	dir := e2eDir(t)
	writeFiles(t, dir, map[string]string{
		"motd":   "Welcome\nto ccm\non host a\n",
		"secret": "OLD-SECRET\n",
		"blob":   "a\x00c",
	})
	writeManifest(t, dir, "m.yaml", honestDiffManifest)
	before := fstree.Describe(t, dir)
	res := ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--noop", "--color", "never", "--no-report")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if after := fstree.Describe(t, dir); after != before {
		t.Errorf("the tree changed:\n%s\nwas\n%s", after, before)
	}
	if strings.Contains(res.Stdout+res.Stderr, "SECRET") {
		t.Errorf("a show_diff: false content appears in the output:\n%s", res.Stdout)
	}
	if strings.Contains(res.Stdout, "\x1b") {
		t.Errorf("a raw escape character reached the output:\n%q", res.Stdout)
	}
	honestGolden(t, "noop_diff.golden", normalise(dir, res.Stdout))
}

// TestHonestDiffModes: the diff in --json events; a real run shows it only
// with --diff; --no-diff hides it in noop too; a secret never shows.
func TestHonestDiffModes(t *testing.T) {
	ccmtest.Binary(t)
	tests := []struct {
		name     string
		args     []string
		wantDiff map[string]string // ref suffix -> text the diff must hold ("" = no diff)
	}{
		{"noop", []string{"--noop"}, map[string]string{"motd": "-on host a\n+on host b\n", "secret": "content changed (diff hidden)", "new.conf": "--- /dev/null\n"}},
		{"noop no-diff", []string{"--noop", "--no-diff"}, map[string]string{"motd": "content changed (diff hidden)", "secret": "content changed (diff hidden)"}},
		{"real", nil, map[string]string{"motd": "", "secret": ""}},
		{"real diff", []string{"--diff"}, map[string]string{"motd": "@@ -1,3 +1,3 @@\n Welcome\n to ccm\n-on host a\n+on host b\n", "secret": "content changed (diff hidden)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := e2eDir(t)
			writeFiles(t, dir, map[string]string{"motd": "Welcome\nto ccm\non host a\n", "secret": "OLD-SECRET\n"})
			writeManifest(t, dir, "m.yaml", honestDiffManifest)
			out, res := applyJSON(t, dir, append([]string{"m.yaml"}, tc.args...)...)
			if res.Code != 0 {
				t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
			}
			// The new content is in the event's properties, as written in
			// the manifest; the old one is only on this host.
			if strings.Contains(res.Stdout+res.Stderr, "OLD-SECRET") {
				t.Errorf("the old content of a show_diff: false file appears in the output")
			}
			for name, want := range tc.wantDiff {
				e := out.event(t, "file#"+filepath.Join(dir, name))
				switch {
				case want == "" && e.Diff != "":
					t.Errorf("%s: diff %q, want none", name, e.Diff)
				case !strings.Contains(e.Diff, want):
					t.Errorf("%s: diff %q does not hold %q", name, e.Diff, want)
				}
			}
		})
	}
}

// TestHonestNoopPredictsFailure: noop fails a resource whose real apply
// would fail for a reason visible now, and the exit status counts it; a
// parent that an earlier resource would create, or a change by a resource
// of another type, stops the prediction so it never cries wolf.
func TestHonestNoopPredictsFailure(t *testing.T) {
	ccmtest.Binary(t)
	tests := []struct {
		name     string
		manifest string
		args     []string
		exit     int
		failed   map[string]string // ref -> error text
		changed  []string
	}{
		{
			name: "missing parent",
			manifest: `ccm:
  resources:
    - file:
        - @DIR@/ok: {content: "x", owner: @USER@, group: @GROUP@, mode: "0644"}
        - @DIR@/nodir/f: {content: "x", owner: @USER@, group: @GROUP@, mode: "0644"}
`,
			args: []string{"--detailed-exitcodes"}, exit: 6,
			failed:  map[string]string{"file#@DIR@/nodir/f": "the real run would fail to write @DIR@/nodir/f: its parent directory @DIR@/nodir does not exist"},
			changed: []string{"file#@DIR@/ok"},
		},
		{
			name: "parent created earlier in the run",
			manifest: `ccm:
  resources:
    - file:
        - @DIR@/a/b: {ensure: directory, owner: @USER@, group: @GROUP@, mode: "0755"}
        - @DIR@/a/f: {content: "x", owner: @USER@, group: @GROUP@, mode: "0644"}
        - @DIR@/a/b/f: {content: "x", owner: @USER@, group: @GROUP@, mode: "0644"}
`,
			changed: []string{"file#@DIR@/a/b", "file#@DIR@/a/f", "file#@DIR@/a/b/f"},
		},
		{
			name: "unknown owner and group",
			manifest: `ccm:
  resources:
    - file:
        - @DIR@/f: {content: "x", owner: ccm-no-such-user, group: ccm-no-such-group, mode: "0644"}
        - @DIR@/d: {ensure: directory, owner: ccm-no-such-user, group: @GROUP@, mode: "0755"}
`,
			exit: 1,
			failed: map[string]string{
				"file#@DIR@/f": `looking up owner "ccm-no-such-user"`,
				"file#@DIR@/d": `the real run would fail to create directory @DIR@/d: looking up owner "ccm-no-such-user"`,
			},
		},
		{
			name: "missing source",
			manifest: `ccm:
  resources:
    - file:
        - @DIR@/f: {source: nothing-here, owner: @USER@, group: @GROUP@, mode: "0644"}
`,
			exit:   1,
			failed: map[string]string{"file#@DIR@/f": "source @DIR@/nothing-here does not exist"},
		},
		{
			name: "program not found",
			manifest: `ccm:
  resources:
    - exec:
        - ccm-no-such-program --flag: {}
`,
			exit:   1,
			failed: map[string]string{"exec#ccm-no-such-program --flag": `program "ccm-no-such-program" not found in PATH`},
		},
		{
			name: "program an earlier exec may install",
			manifest: `ccm:
  resources:
    - exec:
        - /usr/bin/true: {}
        - /usr/local/bin/ccm-no-such-program: {}
`,
			changed: []string{"exec#/usr/bin/true", "exec#/usr/local/bin/ccm-no-such-program"},
		},
		{
			name: "after a change by another type",
			manifest: `ccm:
  resources:
    - exec:
        - /usr/bin/mkdir @DIR@/made: {}
    - file:
        - @DIR@/made/f: {content: "x", owner: @USER@, group: @GROUP@, mode: "0644"}
`,
			changed: []string{"exec#/usr/bin/mkdir @DIR@/made", "file#@DIR@/made/f"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := e2eDir(t)
			writeManifest(t, dir, "m.yaml", tc.manifest)
			before := fstree.Describe(t, dir)
			res := ccmtest.Run(t, dir, nil, append([]string{"apply", "--json", "--noop", "m.yaml"}, tc.args...)...)
			if res.Code != tc.exit {
				t.Fatalf("exit %d, want %d\n%s\n%s", res.Code, tc.exit, res.Stdout, res.Stderr)
			}
			if after := fstree.Describe(t, dir); after != before {
				t.Errorf("the tree changed:\n%s\nwas\n%s", after, before)
			}
			out := decodeRun(t, res)
			for ref, want := range tc.failed {
				e := out.event(t, e2eExpand(t, dir, ref))
				if !e.Failed || !e2eAnyContains(e.Error, e2eExpand(t, dir, want)) {
					t.Errorf("%s: failed=%v errors %q, want a failure saying %q", ref, e.Failed, e.Error, e2eExpand(t, dir, want))
				}
			}
			for _, ref := range tc.changed {
				e := out.event(t, e2eExpand(t, dir, ref))
				if e.Failed || !e.Changed {
					t.Errorf("%s: %s (errors %q), want changed", ref, e.Outcome(), e.Error)
				}
			}
			if out.Summary.Failed != len(tc.failed) {
				t.Errorf("summary counts %d failed, want %d", out.Summary.Failed, len(tc.failed))
			}
		})
	}
}

// decodeRun decodes the --json document of a run that ended with a result.
func decodeRun(t *testing.T, res ccmtest.Result) runOutput {
	t.Helper()
	var out runOutput
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		t.Fatalf("decoding --json output: %v\nstdout:\n%s\nstderr:\n%s", err, res.Stdout, res.Stderr)
	}
	return out
}

// TestHonestLargeFileSummary: a content change of a file over 512 KiB is
// summarised by sizes and digests, not diffed.
func TestHonestLargeFileSummary(t *testing.T) {
	ccmtest.Binary(t)
	dir := e2eDir(t)
	writeFiles(t, dir, map[string]string{"big": strings.Repeat("0123456789abcdef\n", 40000)}) // 680000 bytes
	writeManifest(t, dir, "m.yaml", `ccm:
  resources:
    - file:
        - @DIR@/big: {content: "small\n", owner: @USER@, group: @GROUP@, mode: "0644"}
`)
	out, res := applyJSON(t, dir, "m.yaml", "--noop")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	e := out.event(t, "file#"+dir+"/big")
	want := "content changed (over 512 KiB, diff not shown): 680000 bytes sha256:"
	if !strings.HasPrefix(e.Diff, want) || !strings.HasSuffix(e.Diff, " → 6 bytes sha256:"+sha256Prefix("small\n")) {
		t.Errorf("diff %q, want %q… → 6 bytes sha256:%s", e.Diff, want, sha256Prefix("small\n"))
	}
}

func sha256Prefix(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}
