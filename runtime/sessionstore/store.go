package sessionstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/segmentio/ksuid"
)

// StartProtocol is the protocol id of the event New writes first.
const StartProtocol = "io.choria.ccm.v1.session.start"

// Suffix ends the name of every event file.
const Suffix = ".event"

// MaxEventSize caps one event file: events carry resource properties (a
// file's content), so they may be large, but not unbounded.
const MaxEventSize = 64 << 20

// tempPrefix starts the names of files being written; readers skip them.
const tempPrefix = ".tmp-"

// Sentinel errors, wrapped with the directory or file they concern.
var (
	// ErrExists: New was given a directory that already exists.
	ErrExists = errors.New("already exists")
	// ErrNotStore: Open was given something that is not a session directory.
	ErrNotStore = errors.New("not a session directory")
	// ErrCorrupt: an event file does not hold a valid event.
	ErrCorrupt = errors.New("invalid event file")
	// ErrRefused: Remove will not delete this directory.
	ErrRefused = errors.New("refusing to remove")
)

// Store is a session directory. Its methods are safe for concurrent use by
// goroutines and by several processes sharing the directory.
type Store struct {
	dir string
}

// StartEvent is the first event of a session.
type StartEvent struct {
	Protocol  string    `json:"protocol"`
	EventID   string    `json:"event_id"`
	Timestamp time.Time `json:"timestamp"`
}

// New creates a session directory and writes its start event. dir "" makes
// a new temporary directory ccm-session-* in os.TempDir(); otherwise dir
// must not exist yet (its parent must).
func New(dir string) (*Store, error) {
	var err error
	if dir == "" {
		if dir, err = os.MkdirTemp("", "ccm-session-*"); err != nil {
			return nil, fmt.Errorf("creating a session directory: %w", err)
		}
	} else {
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, fmt.Errorf("session directory %s: %w", dir, err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil, fmt.Errorf("session directory %s: %w; give a new path, or use the existing session with --session or CCM_SESSION_STORE", dir, ErrExists)
			}
			return nil, fmt.Errorf("creating session directory: %w", err)
		}
	}
	s := &Store{dir: dir}
	start := StartEvent{Protocol: StartProtocol, EventID: ksuid.New().String(), Timestamp: time.Now().UTC()}
	if err := s.write(start.EventID, start); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Open returns the store in an existing directory.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: the session directory is empty; start a session with eval \"$(ccm session new)\"", ErrNotStore)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("session directory %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("session directory %s does not exist; start a session with eval \"$(ccm session new)\"", abs)
	case err != nil:
		return nil, fmt.Errorf("session directory: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("session directory %s: %w (it is a file)", abs, ErrNotStore)
	}
	return &Store{dir: abs}, nil
}

// Dir is the store's absolute directory.
func (s *Store) Dir() string { return s.dir }

// Append writes ev as <event_id>.event, atomically.
func (s *Store) Append(ev *session.Event) error {
	if ev.EventID == "" {
		return errors.New("BUG: appending an event without an event id")
	}
	return s.write(ev.EventID, ev)
}

// write stores v as id.event: a temporary file in the same directory,
// synced, then renamed into place.
func (s *Store) write(id string, v any) error {
	if !validID(id) {
		return fmt.Errorf("event id %q: must be letters and digits", id)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding event %s: %w", id, err)
	}
	f, err := os.CreateTemp(s.dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("session store %s: %w", s.dir, err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(s.dir, id+Suffix))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("session store %s: writing event %s: %w", s.dir, id, err)
	}
	return nil
}

// Contents is everything a store holds, in order.
type Contents struct {
	// Start is the session's start event; nil if the directory has none
	// (made by hand, or the start file was removed).
	Start  *StartEvent
	Events []*session.Event // by timestamp, then event id
}

// Read loads every event file. A file that is not a valid event is an
// error naming it (ErrCorrupt); files being written are not seen.
func (s *Store) Read() (*Contents, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	c := &Contents{}
	for _, de := range entries {
		name := de.Name()
		if !strings.HasSuffix(name, Suffix) || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(s.dir, name)
		if !de.Type().IsRegular() {
			return nil, fmt.Errorf("%s: %w: not a regular file; remove it", path, ErrCorrupt)
		}
		b, err := readCapped(path)
		if err != nil {
			return nil, err
		}
		start, ev, err := Decode(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w; remove the file or start a new session", path, err)
		}
		if start != nil {
			if c.Start == nil || start.Timestamp.Before(c.Start.Timestamp) {
				c.Start = start
			}
			continue
		}
		c.Events = append(c.Events, ev)
	}
	slices.SortStableFunc(c.Events, func(a, b *session.Event) int {
		if n := a.Timestamp.Compare(b.Timestamp); n != 0 {
			return n
		}
		return strings.Compare(a.EventID, b.EventID)
	})
	return c, nil
}

// Session loads the store into an in-memory session, so require and
// subscribe see the latest event of every type#name and type#alias.
func (s *Store) Session() (*session.Session, error) {
	c, err := s.Read()
	if err != nil {
		return nil, err
	}
	return c.Session(), nil
}

// Session records c's events, in order, into a new in-memory session.
func (c *Contents) Session() *session.Session {
	ss := session.New()
	for _, ev := range c.Events {
		ss.Record(ev)
	}
	return ss
}

func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session store: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxEventSize+1))
	if err != nil {
		return nil, fmt.Errorf("session store: %s: %w", path, err)
	}
	if len(b) > MaxEventSize {
		return nil, fmt.Errorf("%s: %w: larger than %d MiB", path, ErrCorrupt, MaxEventSize>>20)
	}
	return b, nil
}

// Decode reads one event file's content: exactly one of start and ev is
// non-nil on success.
func Decode(b []byte) (start *StartEvent, ev *session.Event, err error) {
	var probe struct {
		Protocol string `json:"protocol"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	switch probe.Protocol {
	case StartProtocol:
		start = &StartEvent{}
		if err := strictJSON(b, start); err != nil {
			return nil, nil, err
		}
		if !validID(start.EventID) || start.Timestamp.IsZero() {
			return nil, nil, fmt.Errorf("%w: a session start event needs event_id and timestamp", ErrCorrupt)
		}
		return start, nil, nil
	case session.Protocol:
		ev = &session.Event{}
		if err := strictJSON(b, ev); err != nil {
			return nil, nil, err
		}
		switch {
		case !validID(ev.EventID):
			return nil, nil, fmt.Errorf("%w: event_id %q must be letters and digits", ErrCorrupt, ev.EventID)
		case ev.Timestamp.IsZero():
			return nil, nil, fmt.Errorf("%w: timestamp missing", ErrCorrupt)
		case ev.Type == "" || ev.Name == "":
			return nil, nil, fmt.Errorf("%w: type and name are required", ErrCorrupt)
		}
		if ev.Error == nil {
			ev.Error = []string{}
		}
		return nil, ev, nil
	}
	return nil, nil, fmt.Errorf("%w: protocol %q is neither %s nor %s", ErrCorrupt, probe.Protocol, StartProtocol, session.Protocol)
}

// strictJSON decodes exactly one JSON value into v.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the event", ErrCorrupt)
	}
	return nil
}

// validID accepts KSUID-like ids: letters and digits only, so an id is a
// safe file name.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
