package host

import (
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
