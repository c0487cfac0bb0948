package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// statusAfter is how long a step runs before its status line appears;
// statusEvery how often the line is redrawn.
const (
	statusAfter = time.Second
	statusEvery = 250 * time.Millisecond
)

// statusLine is the live "what is ccm doing" line of a terminal run: once
// a step (a plugin apply, a health-check try, the wait between tries) has
// taken statusAfter, it shows the resource, the step and the elapsed time,
// redrawn in place. It is an io.Writer wrapping the terminal: every write
// erases the line first, so log lines never mix with it, and the next
// redraw puts it back under them.
type statusLine struct {
	mu       sync.Mutex
	w        io.Writer
	now      func() time.Time // a fake clock in tests
	width    int              // terminal columns; 0 = unknown
	resource string           // "" = no step running
	step     string
	start    time.Time
	gen      int    // bumped by each Step, ends the previous ticker
	drawn    bool   // the line is on the screen
	text     string // what it shows, when drawn
}

// newStatusLine returns a status line for w when w is an interactive
// terminal (and TERM is not dumb), else nil.
func newStatusLine(w io.Writer) *statusLine {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return nil
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return nil
	}
	return &statusLine{w: w, now: time.Now, width: int(ws.Col)}
}

// Write erases the status line, then writes b.
func (s *statusLine) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	return s.w.Write(b)
}

// Step says what is being done for resource from now on; an empty resource
// ends the step (and erases the line). A ticker redraws the line while the
// step lasts.
func (s *statusLine) Step(resource, step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.erase()
	s.gen++
	s.resource, s.step, s.start = resource, step, s.now()
	if resource == "" {
		return
	}
	go s.tickUntilNext(s.gen)
}

func (s *statusLine) tickUntilNext(gen int) {
	t := time.NewTicker(statusEvery)
	defer t.Stop()
	for range t.C {
		if !s.tick(gen) {
			return
		}
	}
}

// tick draws the line when the step gen is still running and has taken
// statusAfter; it reports whether the step is still running.
func (s *statusLine) tick(gen int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen || s.resource == "" {
		return false
	}
	elapsed := s.now().Sub(s.start)
	if elapsed < statusAfter {
		return true
	}
	line := fmt.Sprintf("… %s: %s (%s)", s.resource, s.step, elapsed.Truncate(time.Second))
	if r := []rune(line); s.width > 1 && len(r) >= s.width {
		line = string(r[:s.width-1])
	}
	if s.drawn && line == s.text {
		return true // unchanged: no redraw
	}
	fmt.Fprintf(s.w, "\r\x1b[K%s", escapeControl(line))
	s.drawn, s.text = true, line
	return true
}

// erase removes a drawn line; the caller holds mu.
func (s *statusLine) erase() {
	if s.drawn {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.drawn = false
	}
}
