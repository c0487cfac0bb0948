package host

import (
	"fmt"
	"strings"

	extism "github.com/extism/go-sdk"
)

// extismLog receives a guest's Extism log_* lines (and, at debug level,
// Extism's own chatter, filtered here) and hands them to the current call's
// caller.Log.
func (p *plugin) extismLog(level extism.LogLevel, message string) {
	if p.logTo == nil || extismChatter(message) {
		return
	}
	p.logTo(logLevelName(level), message)
}

// extismChatter recognises the debug lines Extism itself logs around each
// call; they describe the host, not the plugin.
func extismChatter(msg string) bool {
	for _, prefix := range []string{
		"Calling function : ",
		"Initializing runtime for ",
		"Calling _initialize",
		"Calling __wasm_call_ctors",
		"Initialized Haskell language runtime",
	} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

func logLevelName(l extism.LogLevel) string {
	switch l {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		return "debug"
	case extism.LogLevelInfo:
		return "info"
	case extism.LogLevelWarn:
		return "warn"
	}
	return "error"
}

// A plugin's log lines reach the operator's terminal; a call may not flood
// it. Past maxLogBytes a call's further lines are dropped, after one line
// saying so; a line longer than maxLogLine is cut. maxLogBytes is the
// default exec_output_bytes: exec's logoutput can still show all of a
// command's output it keeps.
const (
	maxLogBytes = 1 << 20
	maxLogLine  = 4 << 10
)

// logBudget counts one call's log bytes. Its lines (ccm_log and Extism's
// log_*) arrive one at a time, on the call's goroutine.
type logBudget struct {
	used    int
	dropped bool
}

// pass hands message to out line by line while the budget lasts.
func (b *logBudget) pass(out func(level, message string), who, level, message string) {
	if b.dropped {
		return
	}
	for len(message) > 0 {
		line, rest, _ := strings.Cut(message, "\n")
		message = rest
		if len(line) > maxLogLine {
			line = fmt.Sprintf("%s... (line of %d bytes cut at %d)", line[:maxLogLine], len(line), maxLogLine)
		}
		if b.used+len(line) > maxLogBytes {
			b.dropped = true
			out("warn", fmt.Sprintf("%s logged more than %d MiB in one call (log_bytes limit); the rest of its log lines are dropped", who, maxLogBytes>>20))
			return
		}
		b.used += len(line) + 1
		out(level, line)
	}
}
