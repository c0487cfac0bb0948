package sessionstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/session"
)

func TestNewDefaultDirectory(t *testing.T) {
	s, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(s.Dir())
	if !strings.HasPrefix(filepath.Base(s.Dir()), "ccm-session-") || filepath.Dir(s.Dir()) != filepath.Clean(os.TempDir()) {
		t.Fatalf("dir = %s, want ccm-session-* in %s", s.Dir(), os.TempDir())
	}
	fi, err := os.Stat(s.Dir())
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("stat = %v, %v; want a 0700 directory", fi, err)
	}
	c, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if c.Start == nil || c.Start.Protocol != StartProtocol || len(c.Events) != 0 {
		t.Fatalf("contents = %+v, want only a start event", c)
	}
	files, _ := filepath.Glob(filepath.Join(s.Dir(), "*.event"))
	if len(files) != 1 || filepath.Base(files[0]) != c.Start.EventID+".event" {
		t.Fatalf("files = %v, want %s.event", files, c.Start.EventID)
	}
}

func TestNewAndOpenErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir, want string
		open            bool
		is              error
	}{
		{name: "new existing", dir: tmp, want: "already exists", is: ErrExists},
		{name: "new missing parent", dir: filepath.Join(tmp, "no", "such"), want: "no such file"},
		{name: "open missing", dir: filepath.Join(tmp, "nope"), open: true, want: "does not exist; start a session"},
		{name: "open file", dir: file, open: true, want: "not a session directory", is: ErrNotStore},
		{name: "open empty", dir: "", open: true, want: "is empty", is: ErrNotStore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.open {
				_, err = Open(tc.dir)
			} else {
				_, err = New(tc.dir)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want errors.Is %v", err, tc.is)
			}
		})
	}
}

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := New(filepath.Join(t.TempDir(), "session"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func event(typ, name string, at time.Time, mut func(*session.Event)) *session.Event {
	ev := session.NewEvent(typ, name, "")
	ev.Timestamp = at
	if mut != nil {
		mut(ev)
	}
	return ev
}

// Events in the same second must come back in timestamp order whatever
// their KSUIDs say: the latest per ref decides require/subscribe.
func TestOrderWithinOneSecond(t *testing.T) {
	s := newStore(t)
	base := time.Now().UTC().Truncate(time.Second)
	first := event("file", "/x", base.Add(100*time.Millisecond), func(e *session.Event) { e.Fail("boom") })
	second := event("file", "/x", base.Add(200*time.Millisecond), func(e *session.Event) { e.Changed = true })
	// Make the ids sort against the timestamps.
	first.EventID, second.EventID = "zzzz", "aaaa"
	for _, ev := range []*session.Event{second, first} {
		if err := s.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	ss, err := s.Session()
	if err != nil {
		t.Fatal(err)
	}
	latest, ok := ss.Latest("file#/x")
	if !ok || latest.EventID != "aaaa" || !latest.Changed {
		t.Fatalf("latest = %+v, want the later (changed) event", latest)
	}
}

func TestRoundTripAndReport(t *testing.T) {
	s := newStore(t)
	now := time.Now().UTC()
	evs := []*session.Event{
		event("package", "hello", now.Add(1*time.Millisecond), func(e *session.Event) { e.Changed = true; e.Duration = time.Second }),
		event("file", "/etc/x", now.Add(2*time.Millisecond), nil),
		event("file", "/etc/x", now.Add(3*time.Millisecond), func(e *session.Event) { e.Fail("nope") }),
		event("service", "hello", now.Add(4*time.Millisecond), func(e *session.Event) { e.Skipped = true; e.Alias = "svc" }),
		event("exec", "reload", now.Add(5*time.Millisecond), func(e *session.Event) { e.Changed, e.Refreshed = true, true }),
	}
	for _, ev := range evs {
		if err := s.Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Events) != len(evs) {
		t.Fatalf("read %d events, want %d", len(c.Events), len(evs))
	}
	for i, ev := range c.Events {
		a, _ := json.Marshal(evs[i])
		b, _ := json.Marshal(ev)
		if !bytes.Equal(a, b) {
			t.Errorf("event %d:\n got %s\nwant %s", i, b, a)
		}
	}
	if _, ok := c.Session().Latest("service#svc"); !ok {
		t.Error("alias not indexed")
	}
	r := c.Report()
	want := Report{Unique: 4}
	want.Total, want.Stable, want.Changed, want.Failed, want.Skipped, want.Refreshed, want.TotalErrors = 5, 1, 2, 1, 1, 1, 1
	gotRT := r.RunTime
	r.RunTime = 0
	if r != want {
		t.Fatalf("report = %+v\nwant     %+v", r, want)
	}
	if gotRT < time.Second {
		t.Fatalf("run time = %s, want at least the package's 1s", gotRT)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"Session Summary", "Total Resources: 5", "Unique Resources: 4", "Changed Resources: 2", "Refreshed Resources: 1", "Total Errors: 1"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, b.String())
		}
	}
}

func TestConcurrentAppendAndRead(t *testing.T) {
	s := newStore(t)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.Append(session.NewEvent("exec", fmt.Sprintf("w%d-%d", w, i), "")); err != nil {
					errs <- err
				}
			}
		})
		// Readers run meanwhile and must never see a partial file.
		wg.Go(func() {
			for range each {
				if _, err := s.Read(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	c, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Events) != writers*each || c.Report().Unique != writers*each {
		t.Fatalf("events = %d, want %d", len(c.Events), writers*each)
	}
	left, _ := filepath.Glob(filepath.Join(s.Dir(), tempPrefix+"*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestCorruptFiles(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
	}{
		{"truncated", `{"protocol":"io.choria.ccm.v1.transaction.event","event_id":"abc`, "unexpected end"},
		{"not json", "hello", "invalid character"},
		{"unknown protocol", `{"protocol":"x"}`, `protocol "x"`},
		{"no id", `{"protocol":"io.choria.ccm.v1.transaction.event","timestamp":"2024-01-01T00:00:00Z","type":"file","name":"x"}`, "event_id"},
		{"bad id", `{"protocol":"io.choria.ccm.v1.transaction.event","event_id":"../x","timestamp":"2024-01-01T00:00:00Z","type":"file","name":"x"}`, "event_id"},
		{"no timestamp", `{"protocol":"io.choria.ccm.v1.transaction.event","event_id":"a","type":"file","name":"x"}`, "timestamp"},
		{"no name", `{"protocol":"io.choria.ccm.v1.transaction.event","event_id":"a","timestamp":"2024-01-01T00:00:00Z","type":"file"}`, "type and name"},
		{"trailing", `{"protocol":"io.choria.ccm.v1.session.start","event_id":"a","timestamp":"2024-01-01T00:00:00Z"} {}`, "trailing"},
		{"bad start", `{"protocol":"io.choria.ccm.v1.session.start"}`, "start event needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			path := filepath.Join(s.Dir(), "bad.event")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := s.Read()
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrCorrupt naming %s and %q", err, path, tc.want)
			}
		})
	}
	t.Run("in-flight temp files are not read", func(t *testing.T) {
		s := newStore(t)
		if err := os.WriteFile(filepath.Join(s.Dir(), tempPrefix+"123"), []byte("{partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("directory named like an event", func(t *testing.T) {
		s := newStore(t)
		if err := os.Mkdir(filepath.Join(s.Dir(), "x.event"), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestRemove(t *testing.T) {
	t.Run("inside the temp dir", func(t *testing.T) {
		s, err := New("")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Append(session.NewEvent("exec", "x", "")); err != nil {
			t.Fatal(err)
		}
		if err := s.Remove(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
			t.Fatalf("directory still there: %v", err)
		}
	})
	t.Run("outside the temp dir", func(t *testing.T) {
		// The checkout itself may live in /tmp (CI clones there), so the
		// temporary directory is moved rather than the session.
		base := t.TempDir()
		t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
		if err := os.Mkdir(filepath.Join(base, "tmp"), 0o700); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(base, "outside")
		s, err := New(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Remove(); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "not inside the temporary directory") {
			t.Fatalf("err = %v", err)
		}
		if _, err := os.Stat(dir); err != nil {
			t.Fatal("refused removal removed the directory")
		}
	})
	t.Run("the temp dir itself", func(t *testing.T) {
		s := &Store{dir: os.TempDir()}
		if err := s.Remove(); !errors.Is(err, ErrRefused) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("foreign files", func(t *testing.T) {
		s, err := New("")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(s.Dir())
		if err := os.WriteFile(filepath.Join(s.Dir(), "notes.txt"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := s.Remove(); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "notes.txt") {
			t.Fatalf("err = %v", err)
		}
	})
}

func FuzzDecode(f *testing.F) {
	ev := session.NewEvent("file", "/etc/motd", "m")
	ev.Properties = map[string]any{"content": "x\n"}
	b, _ := json.Marshal(ev)
	f.Add(b)
	f.Add([]byte(`{"protocol":"io.choria.ccm.v1.session.start","event_id":"2abc","timestamp":"2024-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"protocol":"io.choria.ccm.v1.transaction.event","event_id":"a","timestamp":"2024-01-01T00:00:00Z","type":"file","name":"x","duration":"1s"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		start, ev, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			if start != nil || ev != nil {
				t.Fatal("error with a result")
			}
			return
		}
		if (start == nil) == (ev == nil) {
			t.Fatalf("want exactly one of start and event: %v %v", start, ev)
		}
		if ev != nil {
			// What was read writes back and reads again the same.
			out, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			_, again, err := Decode(out)
			if err != nil {
				t.Fatalf("re-decoding %s: %v", out, err)
			}
			if again.Ref() != ev.Ref() || again.EventID != ev.EventID || again.Failed != ev.Failed {
				t.Fatalf("round trip changed the event: %+v vs %+v", again, ev)
			}
		}
	})
}
