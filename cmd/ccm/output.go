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
	w     io.Writer
	color bool
}

func newPrinter(w io.Writer, color bool) *printer { return &printer{w: w, color: color} }

const (
	ansiReset  = "\x1b[0m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiRed    = "\x1b[31m"
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
