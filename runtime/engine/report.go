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

// Stepper is a Reporter that can show what a slow step is doing (a live
// status line on a terminal). Step starts a step for resource (type#name):
// step says what, e.g. "applying", "health check http, try 2/5". An empty
// resource ends it; the next Event or Log line also follows its end.
type Stepper interface {
	Step(resource, step string)
}

// step tells a Stepper reporter what is being done; resource "" ends it.
func (e *Engine) step(resource, what string) {
	if s, ok := e.report.(Stepper); ok {
		s.Step(resource, what)
	}
}

type nopReporter struct{}

func (nopReporter) ManifestStart(string, int, int) {}
func (nopReporter) Message(string)                 {}
func (nopReporter) Event(*session.Event, int)      {}
func (nopReporter) Log(string, string, string)     {}
