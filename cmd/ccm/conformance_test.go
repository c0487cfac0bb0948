package main

// The conformance suite of the apply resource: every sentence of the user's
// text about apply (testdata/conformance/apply/seed.txt) is proved by at
// least one case directory that runs the real ccm binary on real manifests.
//
// A case is testdata/conformance/apply/<NNN-short-name>/ holding manifests
// and a case.yaml (sentences it proves, then steps: ccm invocations with the
// expected exit status, output, events, summary and files). The case
// directory is copied to a temporary directory with @DIR@, @USER@ and @GROUP@
// replaced in every file, and all steps run there in order. docs/apply.md
// explains the format for people adding cases.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/session"
	"go.yaml.in/yaml/v3"
)

var updateConformanceDoc = flag.Bool("update-conformance-doc", false, "rewrite the sentence table of docs/apply.md from the conformance cases")

const (
	conformanceDir = "../../testdata/conformance/apply"
	seedFile       = conformanceDir + "/seed.txt"
	applyDoc       = "../../docs/apply.md"
	// hardLimit ends a ccm run that never returns, so a regression such as
	// unbounded recursion fails its case instead of hanging the suite.
	hardLimit = 60 * time.Second
	// minFragmentWords keeps "exact sentence fragments" meaningful: a case
	// cannot claim a sentence by listing one common word of it.
	minFragmentWords = 4
)

// confCase is one case.yaml.
type confCase struct {
	Sentences []string   `yaml:"sentences"`
	Spec      string     `yaml:"spec"`
	Steps     []confStep `yaml:"steps"`
}

// confStep is one ccm invocation and what it must produce.
type confStep struct {
	Name           string             `yaml:"name"`
	Write          map[string]*string `yaml:"write"` // before the run; null removes
	Args           []string           `yaml:"args"`
	Env            []string           `yaml:"env"`
	JSON           *bool              `yaml:"json"` // default true: add --json
	Exit           int                `yaml:"exit"`
	StdoutContains []string           `yaml:"stdout_contains"`
	StdoutLacks    []string           `yaml:"stdout_lacks"`
	StderrContains []string           `yaml:"stderr_contains"`
	Events         []confEvent        `yaml:"events"`
	Order          []string           `yaml:"order"` // refs whose first events appear in this order
	Summary        map[string]int     `yaml:"summary"`
	Files          map[string]*string `yaml:"files"` // null: must not exist
	MaxSeconds     float64            `yaml:"max_seconds"`
}

// confEvent is a subset match against the last event with Ref.
type confEvent struct {
	Ref             string   `yaml:"ref"`
	Absent          bool     `yaml:"absent"`
	Count           *int     `yaml:"count"` // events with this ref
	Changed         *bool    `yaml:"changed"`
	Failed          *bool    `yaml:"failed"`
	Noop            *bool    `yaml:"noop"`
	Skipped         *bool    `yaml:"skipped"`
	Refreshed       *bool    `yaml:"refreshed"`
	HealthCheckOnly *bool    `yaml:"health_check_only"`
	ErrorContains   string   `yaml:"error_contains"`
	NoopMessage     string   `yaml:"noop_message"`
	RequestedEnsure string   `yaml:"requested_ensure"`
	Manifest        string   `yaml:"manifest"`
	Health          []string `yaml:"health"` // statuses of its health checks, in order
	Unmet           []string `yaml:"unmet"`
	MessageContains string   `yaml:"message_contains"`
}

// summaryFields maps case.yaml's short summary keys to the summary's values.
var summaryFields = map[string]func(session.Summary) int{
	"total":           func(s session.Summary) int { return s.Total },
	"stable":          func(s session.Summary) int { return s.Stable },
	"changed":         func(s session.Summary) int { return s.Changed },
	"failed":          func(s session.Summary) int { return s.Failed },
	"skipped":         func(s session.Summary) int { return s.Skipped },
	"refreshed":       func(s session.Summary) int { return s.Refreshed },
	"unmet":           func(s session.Summary) int { return s.UnmetRequirements },
	"checked":         func(s session.Summary) int { return s.Checked },
	"checks_ok":       func(s session.Summary) int { return s.ChecksOK },
	"checks_warning":  func(s session.Summary) int { return s.ChecksWarning },
	"checks_critical": func(s session.Summary) int { return s.ChecksCritical },
	"checks_unknown":  func(s session.Summary) int { return s.ChecksUnknown },
	"errors":          func(s session.Summary) int { return s.TotalErrors },
}

func TestConformanceApply(t *testing.T) {
	names := caseNames(t)
	if len(names) == 0 {
		t.Fatalf("no cases under %s", conformanceDir)
	}
	user, group := me(t)
	ccmtest.Binary(t) // build once, before the parallel cases race to do it
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			copyCase(t, filepath.Join(conformanceDir, name), dir, strings.NewReplacer("@DIR@", dir, "@USER@", user, "@GROUP@", group))
			c := readCase(t, filepath.Join(dir, "case.yaml"))
			for i, st := range c.Steps {
				label := fmt.Sprintf("step %d", i+1)
				if st.Name != "" {
					label += " (" + st.Name + ")"
				}
				runStep(t, dir, label, st)
			}
		})
	}
}

// TestConformanceSeedCovered fails when a sentence of the seed is proved by
// no case, or when a case claims a sentence the seed does not contain.
func TestConformanceSeedCovered(t *testing.T) {
	sentences := seedSentences(t)
	if len(sentences) < 20 {
		t.Fatalf("found only %d sentences in %s; the splitter is broken", len(sentences), seedFile)
	}
	cover := coverage(t, sentences)
	for _, s := range sentences {
		if len(cover[s]) == 0 {
			t.Errorf("no case proves: %q", s)
		}
	}
}

// TestConformanceDocTable keeps the sentence → cases table of docs/apply.md
// in step with the cases; -update-conformance-doc rewrites it.
func TestConformanceDocTable(t *testing.T) {
	const begin, end = "<!-- BEGIN conformance table -->\n", "<!-- END conformance table -->"
	sentences := seedSentences(t)
	cover := coverage(t, sentences)
	var b strings.Builder
	b.WriteString("| # | seed sentence | cases |\n|---|---|---|\n")
	for i, s := range sentences {
		var links []string
		for _, c := range cover[s] {
			links = append(links, fmt.Sprintf("[%s](../testdata/conformance/apply/%s/case.yaml)", c, c))
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", i+1, strings.ReplaceAll(s, "|", `\|`), strings.Join(links, "<br>"))
	}
	table := b.String()

	doc, err := os.ReadFile(applyDoc)
	if err != nil {
		t.Fatalf("reading %s: %v", applyDoc, err)
	}
	i := bytes.Index(doc, []byte(begin))
	j := bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q around the sentence table", applyDoc, strings.TrimSpace(begin), end)
	}
	current := string(doc[i+len(begin) : j])
	if current == table {
		return
	}
	if !*updateConformanceDoc {
		t.Fatalf("the sentence table in %s is stale; run: go test ./cmd/ccm -run TestConformanceDocTable -update-conformance-doc", applyDoc)
	}
	out := slices.Concat(doc[:i+len(begin)], []byte(table), doc[j:])
	if err := os.WriteFile(applyDoc, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestApplyExample keeps examples/apply working: converged into a temporary
// root (instead of /tmp/ccm-apply-demo) it changes everything, then nothing.
func TestApplyExample(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "demo")
	manifest, err := filepath.Abs("../../examples/apply/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []session.Summary{{Total: 12, Changed: 12, Refreshed: 1}, {Total: 12, Stable: 12}} {
		res, _ := runCCM(t, t.TempDir(), nil, "apply", manifest, "--json", "--data", "root="+root)
		var out runOutput
		if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &out) != nil {
			t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", i+1, res.Code, res.Stdout, res.Stderr)
		}
		got := out.Summary
		if got.Total != want.Total || got.Changed != want.Changed || got.Stable != want.Stable || got.Refreshed != want.Refreshed || got.Failed != 0 {
			t.Fatalf("run %d: summary %+v, want %+v\n%s", i+1, got, want, eventList(out.Events))
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "app", "app.conf"))
	if err != nil || string(b) != "listen = 8080\nlog_level = info\n" {
		t.Fatalf("app.conf = %q, %v", b, err)
	}
}

// TestSeedSentences pins the sentence splitter on the shapes the seed uses.
func TestSeedSentences(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"heading skipped", "Apply\n\nOne sentence.", []string{"One sentence."}},
		{"two sentences on a line", "First one. Second one.", []string{"First one.", "Second one."}},
		{"yaml example skipped", "Intro:\n\n- apply:\n    - a.yaml: {}\n# comment\n/opt/x.yaml\n  apply: y", []string{"Intro:"}},
		{"period inside quotes kept", `Use {{ lookup("data.port") }}. Next.`, []string{`Use {{ lookup("data.port") }}.`, "Next."}},
		{"colon inside a sentence kept", "If it sets fail_on_error: true, it stops.", []string{"If it sets fail_on_error: true, it stops."}},
		{"crlf and no final newline", "A b.\r\nC d.", []string{"A b.", "C d."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := splitSentences(tt.text); !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// runStep runs one step in dir and checks everything it expects.
func runStep(t *testing.T, dir, label string, st confStep) {
	t.Helper()
	for rel, content := range st.Write {
		p := filepath.Join(dir, rel)
		if content == nil {
			if err := os.RemoveAll(p); err != nil {
				t.Fatalf("%s: removing %s: %v", label, rel, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(*content), 0o644); err != nil {
			t.Fatalf("%s: writing %s: %v", label, rel, err)
		}
	}
	useJSON := st.JSON == nil || *st.JSON
	args := st.Args
	if useJSON {
		args = append(slices.Clone(args), "--json")
	}
	res, took := runCCM(t, dir, st.Env, args...)
	where := fmt.Sprintf("%s: ccm %s", label, strings.Join(args, " "))
	dump := fmt.Sprintf("\nstdout:\n%s\nstderr:\n%s", res.Stdout, res.Stderr)

	if res.Code != st.Exit {
		t.Fatalf("%s: exit %d, want %d%s", where, res.Code, st.Exit, dump)
	}
	if st.MaxSeconds > 0 && took > time.Duration(st.MaxSeconds*float64(time.Second)) {
		t.Errorf("%s: took %s, want at most %gs", where, took.Round(time.Millisecond), st.MaxSeconds)
	}
	for _, want := range st.StdoutContains {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("%s: stdout lacks %q%s", where, want, dump)
		}
	}
	for _, bad := range st.StdoutLacks {
		if strings.Contains(res.Stdout, bad) {
			t.Errorf("%s: stdout has %q%s", where, bad, dump)
		}
	}
	for _, want := range st.StderrContains {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("%s: stderr lacks %q%s", where, want, dump)
		}
	}
	if len(st.Events) > 0 || len(st.Order) > 0 || len(st.Summary) > 0 {
		var out runOutput
		if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
			t.Fatalf("%s: decoding --json output: %v%s", where, err, dump)
		}
		for _, want := range st.Events {
			if msg := matchEvent(out.Events, want); msg != "" {
				t.Errorf("%s: %s: %s\nevents:\n%s", where, want.Ref, msg, eventList(out.Events))
			}
		}
		if msg := matchOrder(out.Events, st.Order); msg != "" {
			t.Errorf("%s: %s\nevents:\n%s", where, msg, eventList(out.Events))
		}
		for _, key := range sortedKeys(st.Summary) {
			want := st.Summary[key]
			if got := summaryFields[key](out.Summary); got != want {
				t.Errorf("%s: summary %s = %d, want %d (summary %+v)", where, key, got, want, out.Summary)
			}
		}
	}
	for rel, want := range st.Files {
		got, err := os.ReadFile(filepath.Join(dir, rel))
		switch {
		case want == nil && err == nil:
			t.Errorf("%s: %s exists, want it absent", where, rel)
		case want == nil && errors.Is(err, fs.ErrNotExist):
		case err != nil:
			t.Errorf("%s: %s: %v", where, rel, err)
		case string(got) != *want:
			t.Errorf("%s: %s = %q, want %q", where, rel, got, *want)
		}
	}
}

// matchEvent checks want against the last event with its ref; it returns
// what differs, or "".
func matchEvent(events []*session.Event, want confEvent) string {
	var last *session.Event
	count := 0
	for _, e := range events {
		if e.Ref() == want.Ref {
			last = e
			count++
		}
	}
	if want.Count != nil && count != *want.Count {
		return fmt.Sprintf("%d events, want %d", count, *want.Count)
	}
	if want.Absent {
		if last != nil {
			return "has an event, want none"
		}
		return ""
	}
	if last == nil {
		return "no event"
	}
	var diffs []string
	checkBool := func(name string, want *bool, got bool) {
		if want != nil && *want != got {
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", name, got, *want))
		}
	}
	checkBool("changed", want.Changed, last.Changed)
	checkBool("failed", want.Failed, last.Failed)
	checkBool("noop", want.Noop, last.Noop)
	checkBool("skipped", want.Skipped, last.Skipped)
	checkBool("refreshed", want.Refreshed, last.Refreshed)
	checkBool("health_check_only", want.HealthCheckOnly, last.HealthCheckOnly)
	if want.ErrorContains != "" && !strings.Contains(strings.Join(last.Error, "\n"), want.ErrorContains) {
		diffs = append(diffs, fmt.Sprintf("errors %q lack %q", last.Error, want.ErrorContains))
	}
	if want.MessageContains != "" && !strings.Contains(strings.Join(last.Messages, "\n"), want.MessageContains) {
		diffs = append(diffs, fmt.Sprintf("messages %q lack %q", last.Messages, want.MessageContains))
	}
	if want.NoopMessage != "" && last.NoopMessage != want.NoopMessage {
		diffs = append(diffs, fmt.Sprintf("noop_message = %q, want %q", last.NoopMessage, want.NoopMessage))
	}
	if want.RequestedEnsure != "" && last.RequestedEnsure != want.RequestedEnsure {
		diffs = append(diffs, fmt.Sprintf("requested_ensure = %q, want %q", last.RequestedEnsure, want.RequestedEnsure))
	}
	if want.Manifest != "" && last.Manifest != want.Manifest {
		diffs = append(diffs, fmt.Sprintf("manifest = %q, want %q", last.Manifest, want.Manifest))
	}
	if want.Health != nil {
		var got []string
		for _, h := range last.HealthCheck {
			got = append(got, h.Status)
		}
		if !slices.Equal(got, want.Health) {
			diffs = append(diffs, fmt.Sprintf("health checks %q, want %q", got, want.Health))
		}
	}
	if want.Unmet != nil && !slices.Equal(last.UnmetRequirements, want.Unmet) {
		diffs = append(diffs, fmt.Sprintf("unmet %q, want %q", last.UnmetRequirements, want.Unmet))
	}
	return strings.Join(diffs, "; ")
}

// matchOrder checks that the first events of refs appear in that order.
func matchOrder(events []*session.Event, refs []string) string {
	prev := -1
	for _, ref := range refs {
		at := slices.IndexFunc(events, func(e *session.Event) bool { return e.Ref() == ref })
		if at < 0 {
			return fmt.Sprintf("order: no event for %s", ref)
		}
		if at < prev {
			return fmt.Sprintf("order: %s ran before the resources listed above it in %q", ref, refs)
		}
		prev = at
	}
	return ""
}

func eventList(events []*session.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %s [%s] changed=%v failed=%v skipped=%v noop=%v errors=%q\n", e.Ref(), e.Manifest, e.Changed, e.Failed, e.Skipped, e.Noop, e.Error)
	}
	return b.String()
}

// runCCM runs the built ccm in dir like ccmtest.Run, but kills it after
// hardLimit and reports how long it took.
func runCCM(t *testing.T, dir string, env []string, args ...string) (ccmtest.Result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hardLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, ccmtest.Binary(t), args...)
	cmd.Dir = dir
	// The same environment ccmtest.Run gives, so the plugin compile cache
	// it keeps under the temp directory is shared with the other e2e tests.
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"CCM_CACHE_DIR=" + filepath.Join(os.TempDir(), "ccmtest-cache"),
		"CCM_BACKGROUND_COMPILE=0",
		"NO_COLOR=1",
	}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("ccm %s did not finish within %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), hardLimit, stdout.String(), stderr.String())
	}
	res := ccmtest.Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running ccm %s: %v", strings.Join(args, " "), err)
	}
	return res, took
}

// caseNames lists the case directories, sorted.
func caseNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(conformanceDir)
	if err != nil {
		t.Fatalf("reading %s: %v", conformanceDir, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// copyCase copies the case tree from src to dst, replacing placeholders in
// every file and keeping file modes.
func copyCase(t *testing.T, src, dst string, r *strings.Replacer) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, []byte(r.Replace(string(b))), info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copying case %s: %v", src, err)
	}
}

// readCase decodes a case.yaml strictly: a misspelt key is an error, not a
// silently skipped check.
func readCase(t *testing.T, path string) confCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading case: %v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c confCase
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(c.Steps) == 0 {
		t.Fatalf("%s: no steps", path)
	}
	if len(c.Sentences) == 0 && c.Spec == "" {
		t.Fatalf("%s: lists neither sentences nor spec; say what the case proves", path)
	}
	for i, st := range c.Steps {
		if len(st.Args) == 0 {
			t.Fatalf("%s: step %d has no args", path, i+1)
		}
		if st.JSON != nil && !*st.JSON && (len(st.Events) > 0 || len(st.Order) > 0 || len(st.Summary) > 0) {
			t.Fatalf("%s: step %d: events, order and summary need json output; drop `json: false`", path, i+1)
		}
		for key := range st.Summary {
			if _, ok := summaryFields[key]; !ok {
				t.Fatalf("%s: step %d: unknown summary key %q; known: %s", path, i+1, key, strings.Join(sortedKeys(summaryFields), ", "))
			}
		}
		for _, ev := range st.Events {
			if ev.Ref == "" {
				t.Fatalf("%s: step %d: an event without ref", path, i+1)
			}
		}
	}
	return c
}

// coverage maps each seed sentence to the cases that list it (or a fragment
// of it), and fails on listed text that is in no seed sentence.
func coverage(t *testing.T, sentences []string) map[string][]string {
	t.Helper()
	cover := map[string][]string{}
	for _, name := range caseNames(t) {
		c := readCase(t, filepath.Join(conformanceDir, name, "case.yaml"))
		for _, listed := range c.Sentences {
			if len(strings.Fields(listed)) < minFragmentWords {
				t.Errorf("%s: %q is too short to prove a sentence (want at least %d words)", name, listed, minFragmentWords)
				continue
			}
			found := false
			for _, s := range sentences {
				if strings.Contains(s, listed) {
					found = true
					if !slices.Contains(cover[s], name) {
						cover[s] = append(cover[s], name)
					}
				}
			}
			if !found {
				t.Errorf("%s: %q is not (part of) a sentence of %s; copy it exactly", name, listed, seedFile)
			}
		}
	}
	return cover
}

func seedSentences(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(seedFile)
	if err != nil {
		t.Fatalf("reading the seed: %v", err)
	}
	return splitSentences(string(b))
}

// splitSentences returns the prose sentences of the seed. Prose is a line
// that ends like a sentence; headings (no final punctuation), YAML examples
// and path diagrams (indented or starting with "-", "#" or "/") are skipped.
// A line holds several sentences when ". " is followed by a capital.
func splitSentences(text string) []string {
	var out []string
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if line == "" || strings.ContainsRune(" \t-#/", rune(line[0])) {
			continue
		}
		line = strings.TrimSpace(line)
		if !strings.ContainsAny(line[len(line)-1:], ".:!?") {
			continue
		}
		start := 0
		for i := 0; i < len(line)-2; i++ {
			if strings.ContainsRune(".!?", rune(line[i])) && line[i+1] == ' ' && line[i+2] >= 'A' && line[i+2] <= 'Z' {
				out = append(out, line[start:i+1])
				start = i + 2
			}
		}
		out = append(out, line[start:])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
