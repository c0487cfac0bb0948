package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/session"
	"golang.org/x/sys/unix"
)

// printer writes one line per event, CCM style:
// "LEVEL  type#name outcome key=value ...", coloured on a terminal.
type printer struct {
	w      io.Writer
	color  bool
	status *statusLine // nil: no live status line
}

func newPrinter(w io.Writer, color bool) *printer { return &printer{w: w, color: color} }

// withStatus gives the printer a live status line when w is a terminal
// (see statusLine); all its output then goes through it.
func (p *printer) withStatus() *printer {
	if s := newStatusLine(p.w); s != nil {
		p.status, p.w = s, s
	}
	return p
}

// Step implements engine.Stepper.
func (p *printer) Step(resource, step string) {
	if p.status != nil {
		p.status.Step(resource, step)
	}
}

const (
	ansiReset  = "\x1b[0m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[31m"
	ansiCyan   = "\x1b[36m"
)

func (p *printer) ManifestStart(file string, resources, depth int) {
	p.line("INFO", "", fmt.Sprintf("Executing manifest manifest=%s resources=%d", terminalSafe(file), resources), depth)
}

func (p *printer) Message(text string) {
	fmt.Fprintf(p.w, "\n%s\n", terminalSafe(strings.TrimRight(text, "\n")))
}

func (p *printer) Event(e *session.Event, depth int) {
	level, color := "INFO", ansiGreen
	outcome := e.Outcome()
	switch {
	case e.Failed:
		level, color = "ERROR", ansiRed
	case len(e.UnmetRequirements) > 0:
		level, color, outcome = "ERROR", ansiRed, "skipped due to unmet requirement"
	case e.Skipped, e.Changed:
		level, color = "WARN", ansiYellow
	}
	var b strings.Builder
	// Names, errors and messages may come from plugins: terminalSafe
	// (escape.go) before they reach a terminal.
	fmt.Fprintf(&b, "%s %s", terminalSafe(e.Display()), p.paint(color, outcome))
	kv := func(k, v string) {
		if v == "" {
			return
		}
		v = terminalSafe(v)
		if strings.ContainsAny(v, " \t\n\"") {
			v = fmt.Sprintf("%q", v)
		}
		fmt.Fprintf(&b, " %s=%s", k, v)
	}
	kv("ensure", e.FinalEnsure)
	kv("runtime", e.Duration.Round(10*time.Microsecond).String())
	kv("provider", e.Provider)
	kv("noop", e.NoopMessage)
	if len(e.Error) > 0 {
		kv("errors", strings.Join(e.Error, "; "))
	}
	for _, u := range e.UnmetRequirements {
		kv("unmet", u)
	}
	// Health checks (a ccm addition): name=status per check, so a WARNING,
	// which does not fail the resource, still shows.
	var checks []string
	for _, h := range e.HealthCheck {
		checks = append(checks, h.Name+"="+h.Status)
	}
	kv("checks", strings.Join(checks, ","))
	if depth > 0 || e.Type == "apply" {
		kv("manifest", e.Manifest)
	}
	for _, m := range e.Messages {
		kv("info", m)
	}
	p.line(level, color, b.String(), depth)
	p.diff(e.Diff, depth)
}

// diff prints a content diff under its event line, indented, one line per
// diff line, removed lines red and added ones green on a terminal. Control
// characters are escaped so file contents cannot drive the terminal.
func (p *printer) diff(d string, depth int) {
	if d == "" {
		return
	}
	indent := strings.Repeat(" ", 6) + strings.Repeat("  ", depth)
	for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
		color := ""
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			color = ansiRed
		case strings.HasPrefix(l, "+"):
			color = ansiGreen
		case strings.HasPrefix(l, "@@"):
			color = ansiCyan
		}
		fmt.Fprintf(p.w, "%s%s\n", indent, p.paint(color, escapeControl(l)))
	}
}

// escapeControl shows control characters (but tab) as \xNN.
func escapeControl(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r < 0xa0)
}

// Log prints lines a plugin logged for a resource (exec logoutput, ccm_log).
// Debug lines are dropped unless --debug is given.
func (p *printer) Log(resource, level, message string) {
	if level == "debug" && !logDebug {
		return
	}
	for _, l := range strings.Split(strings.TrimRight(message, "\n"), "\n") {
		p.line(strings.ToUpper(level), "", terminalSafe(resource+": "+l), 0)
	}
}

// logsOnly is the reporter of --json runs: the JSON document on stdout holds
// the events, and plugin log lines go to stderr.
type logsOnly struct{ *printer }

func (logsOnly) ManifestStart(string, int, int) {}
func (logsOnly) Message(string)                 {}
func (logsOnly) Event(*session.Event, int)      {}
func (logsOnly) Step(string, string)            {}

func (p *printer) line(level, color, text string, depth int) {
	indent := strings.Repeat("  ", depth)
	fmt.Fprintf(p.w, "%s %s%s\n", p.paint(color, fmt.Sprintf("%-5s", level)), indent, text)
}

func (p *printer) paint(color, s string) string {
	if !p.color || color == "" {
		return s
	}
	return color + s + ansiReset
}

// useColor decides colour: "always", "never", or "auto" = a terminal and no NO_COLOR.
func useColor(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
