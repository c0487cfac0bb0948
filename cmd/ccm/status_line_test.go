package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// TestStatusLineFakeClock drives the status line with a fake clock: nothing
// before a second, then "… resource: step (elapsed)" redrawn in place, and
// erased before any other output and at the end of the step.
func TestStatusLineFakeClock(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(1000, 0)
	s := &statusLine{w: &b, now: func() time.Time { return now }, width: 40}
	s.gen = 1 << 30 // no real ticker interferes: drive tick by hand
	s.mu.Lock()
	s.resource, s.step, s.start = "package#nginx", "applying ensure present", now
	s.mu.Unlock()
	gen := s.gen

	now = now.Add(900 * time.Millisecond)
	if !s.tick(gen) || b.Len() != 0 {
		t.Fatalf("drawn before a second: %q", b.String())
	}
	now = now.Add(1200 * time.Millisecond)
	s.tick(gen)
	if got, want := b.String(), "\r\x1b[K… package#nginx: applying ensure presen"; got != want {
		t.Fatalf("line %q, want %q (cut to the terminal width)", got, want)
	}
	b.Reset()
	now = now.Add(300 * time.Millisecond)
	s.tick(gen)
	if b.Len() != 0 {
		t.Fatalf("an unchanged line was redrawn: %q", b.String())
	}
	if _, err := s.Write([]byte("INFO  a log line\n")); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "\r\x1b[KINFO  a log line\n" {
		t.Fatalf("write did not erase the line first: %q", got)
	}
	b.Reset()
	s.Step("", "")
	if b.Len() != 0 {
		t.Fatalf("an erased line was erased again: %q", b.String())
	}
	if s.tick(gen) {
		t.Fatal("a finished step kept ticking")
	}
}

// TestStatusLineTerminal runs the binary on a real pseudo-terminal
// (util-linux script): a slow exec shows the live line; --json and a pipe
// show none.
func TestStatusLineTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) not installed")
	}
	bin := ccmtest.Binary(t)
	dir := e2eDir(t)
	writeManifest(t, dir, "m.yaml", "ccm:\n  resources:\n    - exec:\n        - /usr/bin/sleep 1.4: {}\n")
	run := func(args string) string {
		cmd := exec.Command(script, "-qec", bin+" apply m.yaml --color never --no-report "+args, "/dev/null")
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "TERM=xterm")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("script: %v\n%q", err, out)
		}
		return string(out)
	}
	out := run("")
	if !strings.Contains(out, "\r\x1b[K… exec#/usr/bin/sleep 1.4: applying ensure present (1s)") {
		t.Errorf("no live status line on a terminal:\n%q", out)
	}
	if i := strings.LastIndex(out, "… "); i >= 0 && !strings.Contains(out[i:], "\r\x1b[KWARN  exec#/usr/bin/sleep 1.4 changed") {
		t.Errorf("the status line was not erased before the event line:\n%q", out)
	}
	if out := run("--json"); strings.Contains(out, "\x1b[K") || strings.Contains(out, "…") {
		t.Errorf("--json on a terminal drew a status line:\n%q", out)
	}
	piped := ccmtest.Run(t, dir, nil, "apply", "m.yaml", "--color", "never")
	if strings.Contains(piped.Stdout, "\x1b[K") || strings.Contains(piped.Stdout, "…") {
		t.Errorf("piped output drew a status line:\n%q", piped.Stdout)
	}
}

// TestPrinterDiffColour: on a terminal removed lines are red, added ones
// green, headers plain, and control characters escaped.
func TestPrinterDiffColour(t *testing.T) {
	var b bytes.Buffer
	p := newPrinter(&b, true)
	p.diff("--- /f\n+++ /f\n@@ -1 +1 @@\n-old\x1b[2J\n+new\n", 0)
	want := "      --- /f\n      +++ /f\n      \x1b[36m@@ -1 +1 @@\x1b[0m\n" +
		"      \x1b[31m-old\\x1b[2J\x1b[0m\n      \x1b[32m+new\x1b[0m\n"
	if b.String() != want {
		t.Fatalf("diff output\n%q\nwant\n%q", b.String(), want)
	}
}
