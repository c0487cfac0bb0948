package session

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

func TestLatestByNameAndAlias(t *testing.T) {
	s := New()
	first := NewEvent("exec", "a", "")
	s.Record(first)
	second := NewEvent("exec", "a", "first")
	second.Changed = true
	s.Record(second)
	for _, ref := range []string{"exec#a", "exec#first"} {
		got, ok := s.Latest(ref)
		if !ok || got != second {
			t.Fatalf("Latest(%s) = %v, %v; want the latest event", ref, got, ok)
		}
	}
	if _, ok := s.Latest("file#a"); ok {
		t.Fatal("type is part of the reference")
	}
}

func TestSummary(t *testing.T) {
	s := New()
	add := func(mut func(*Event)) {
		e := NewEvent("exec", "x", "")
		mut(e)
		s.Record(e)
	}
	add(func(e *Event) {})                                      // stable
	add(func(e *Event) { e.Changed = true })                    // changed
	add(func(e *Event) { e.Changed, e.Refreshed = true, true }) // changed + refreshed
	add(func(e *Event) { e.Fail("boom") })                      // failed
	add(func(e *Event) { e.Skipped, e.UnmetRequirements = true, []string{"a#b", "c#d"} })
	add(func(e *Event) {
		e.HealthCheck = []HealthCheckResult{{Status: HealthOK}, {Status: HealthWarning}, {Status: HealthCritical}, {Status: HealthUnknown}}
	})
	got := s.Summary()
	want := Summary{Total: 6, Stable: 2, Changed: 2, Failed: 1, Skipped: 1, Refreshed: 1, UnmetRequirements: 2,
		Checked: 1, ChecksOK: 1, ChecksWarning: 1, ChecksCritical: 1, ChecksUnknown: 1, TotalErrors: 1}
	got.RunTime = 0
	if got != want {
		t.Fatalf("summary = %+v\nwant      %+v", got, want)
	}
	var b bytes.Buffer
	if err := got.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"Total Resources: 6", "Unmet Requirements: 2", "Checked Resources: 1 (ok: 1, critical: 1, warning: 1, unknown: 1)"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("summary text lacks %q:\n%s", line, b.String())
		}
	}
}

func TestEventJSONFieldNames(t *testing.T) {
	e := NewEvent("file", "/etc/motd", "")
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"protocol", "event_id", "timestamp", "type", "provider", "name", "requested_ensure", "final_ensure", "duration", "error", "changed", "failed", "noop"} {
		if _, ok := m[k]; !ok {
			t.Errorf("required field %q missing from %s", k, b)
		}
	}
	if m["protocol"] != Protocol {
		t.Errorf("protocol = %v", m["protocol"])
	}
}

func TestConcurrentRecord(t *testing.T) {
	s := New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 100; j++ {
				s.Record(NewEvent("exec", "x", ""))
				s.Latest("exec#x")
				s.Summary()
			}
		})
	}
	wg.Wait()
	if s.Len() != 800 {
		t.Fatalf("len = %d", s.Len())
	}
}
