package engine

import "github.com/ccm-dev/ccm/runtime/session"

// Reporter receives progress as a run happens; cmd/ccm turns it into log
// lines or JSON. Calls come from the engine's goroutine, in order.
type Reporter interface {
	// ManifestStart is called after a manifest loaded, before its first resource.
	ManifestStart(file string, resources int, depth int)
	// Message prints a manifest's pre_message or post_message.
	Message(text string)
	// Event is called once per recorded event.
	Event(e *session.Event, depth int)
	// Log is a line a plugin logged while working on resource (type#name),
	// e.g. an exec's output with logoutput. level is debug, info, warn or
	// error; message may hold several lines.
	Log(resource, level, message string)
}

type nopReporter struct{}

func (nopReporter) ManifestStart(string, int, int) {}
func (nopReporter) Message(string)                 {}
func (nopReporter) Event(*session.Event, int)      {}
func (nopReporter) Log(string, string, string)     {}
