package session

import (
	"sync"
	"time"
)

// Session is an in-memory, concurrency-safe event log with an index of the
// latest event per reference.
type Session struct {
	mu     sync.RWMutex
	start  time.Time
	end    time.Time
	events []*Event
	latest map[string]*Event // "type#name" and "type#alias" → latest event
}

// New starts a session now.
func New() *Session {
	return &Session{start: time.Now(), latest: make(map[string]*Event)}
}

// Record appends an event and makes it the latest for its name and alias.
func (s *Session) Record(e *Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
	s.latest[e.Ref()] = e
	if e.Alias != "" {
		s.latest[e.Type+"#"+e.Alias] = e
	}
	s.end = time.Now()
}

// Latest returns the latest event recorded for ref ("type#name" or
// "type#alias").
func (s *Session) Latest(ref string) (*Event, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.latest[ref]
	return e, ok
}

// Events returns a copy of the recorded events in order.
func (s *Session) Events() []*Event {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]*Event(nil), s.events...)
}

// Len is the number of recorded events.
func (s *Session) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.events)
}

// Summary adds up every event recorded so far. Run time spans the session
// start to the end of the last recorded event (CCM stops at the start of the
// last one.
func (s *Session) Summary() Summary {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sum := Summary{}
	if !s.end.IsZero() {
		sum.RunTime = s.end.Sub(s.start)
	}
	for _, e := range s.events {
		sum.add(e)
	}
	return sum
}
