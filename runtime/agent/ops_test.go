package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestResultsQueuedWhileNATSDown: with the server stopped, results are
// queued (at most QueueSize, the oldest dropped and counted); when the
// server is back the queue is published in order, each result carrying
// the count of dropped ones.
func TestResultsQueuedWhileNATSDown(t *testing.T) {
	store := t.TempDir()
	s := startServer(t, -1, store)
	port := s.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() { s.Shutdown() })
	nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var mu sync.Mutex
	n := 0
	ran := make(chan struct{}, 10)
	clock := &fakeClock{ch: make(chan time.Time)}
	var logs strings.Builder
	a := &Agent{
		Node: "q1", Manifests: []string{"m.yaml"}, Interval: time.Hour, Conn: nc, JS: js, QueueSize: 2, After: clock.after,
		Log: func(f string, args ...any) { mu.Lock(); defer mu.Unlock(); logs.WriteString(f + "\n") },
		Run: func(context.Context, string) (*engine.Result, error) {
			mu.Lock()
			n++
			res := &engine.Result{Summary: session.Summary{Total: n}}
			mu.Unlock()
			ran <- struct{}{}
			return res, nil
		},
	}
	stop := runLoop(t, ctx, a)
	<-ran
	waitStored(t, ctx, js, "q1", 1)

	s.Shutdown()
	s.WaitForShutdown()
	for nc.IsConnected() {
		time.Sleep(10 * time.Millisecond)
	}
	for range 3 { // runs 2, 3 and 4; 2 is dropped
		clock.ch <- time.Now()
		<-ran
	}
	for a.Pending() != 2 {
		time.Sleep(10 * time.Millisecond)
	}
	s = startServer(t, port, store)
	waitStored(t, ctx, js, "q1", 3)
	if a.Pending() != 0 {
		t.Fatalf("%d results still queued", a.Pending())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	c, err := js.OrderedConsumer(ctx, ResultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{ResultSubject("q1")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		msg, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		json.Unmarshal(msg.Data(), &r)
		got = append(got, r.Reason+"/"+string(rune('0'+r.Summary.Total))+"/"+string(rune('0'+r.ResultsDropped)))
	}
	if strings.Join(got, " ") != "start/1/0 interval/3/1 interval/4/1" {
		t.Fatalf("published %v, want the start result, then runs 3 and 4 (run 2 dropped)", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "result queue full") {
		t.Fatalf("the drop was not logged:\n%s", logs.String())
	}
}

// TestHTTPChangeWakesRun: an https manifest is polled with conditional
// GETs; a change wakes a run, and a burst of changes during a run causes
// one more run, not one per change.
func TestHTTPChangeWakesRun(t *testing.T) {
	var mu sync.Mutex
	body, served, notModified := "v1", "", 0
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		tag := `"` + body + `"`
		w.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		served = body
		w.Write([]byte(body))
	}))
	defer srv.Close()
	set := func(b string) { mu.Lock(); body = b; mu.Unlock() }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	src := srv.URL + "/site.tar.gz"
	started := make(chan string, 10)
	release := make(chan struct{})
	a := &Agent{
		Node: "h1", Manifests: []string{src}, Interval: time.Hour, PollInterval: 20 * time.Millisecond, HTTPClient: srv.Client(),
		After: (&fakeClock{ch: make(chan time.Time)}).after,
		Run: func(rctx context.Context, m string) (*engine.Result, error) {
			select {
			case started <- m:
			case <-rctx.Done():
			}
			select {
			case <-release:
			case <-rctx.Done():
			}
			return &engine.Result{}, nil
		},
	}
	stop := runLoop(t, ctx, a)
	// Every wait is bounded by ctx: a missed wake-up fails the test instead
	// of hanging it.
	waitStart := func(what string) {
		t.Helper()
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatalf("no run %s", what)
		}
	}
	let := func() {
		t.Helper()
		select {
		case release <- struct{}{}:
		case <-ctx.Done():
			t.Fatal("the run was never released")
		}
	}
	waitStart("at start")
	let()
	// Unchanged polls are answered 304 and start no run. Wait for two, so
	// the baseline is known before the body changes, however slow the
	// machine is.
	for {
		mu.Lock()
		n := notModified
		mu.Unlock()
		if n >= 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("only %d conditional GETs answered 304", n)
		case <-time.After(10 * time.Millisecond):
		}
	}
	select {
	case <-started:
		t.Fatal("a run with nothing changed")
	default:
	}
	set("v2")
	waitStart("after the change") // woken by the change
	for _, b := range []string{"v3", "v4", "v5"} {
		set(b)
		time.Sleep(60 * time.Millisecond) // polled while the run is held
	}
	// The last change must be seen while the run is still held, or it
	// would rightly start a third run.
	for {
		mu.Lock()
		last := served
		mu.Unlock()
		if last == "v5" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the change to v5 was never fetched (last %s)", last)
		case <-time.After(10 * time.Millisecond):
		}
	}
	let()
	waitStart("after the burst") // exactly one more run
	let()
	select {
	case <-started:
		t.Fatal("a third run: the burst was not coalesced")
	case <-time.After(300 * time.Millisecond):
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if notModified < 3 {
		t.Fatalf("%d conditional GETs answered 304: the polls are not conditional", notModified)
	}
}

// TestFactsCache: facts are gathered once per bound; a failure is not kept.
func TestFactsCache(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	loads := 0
	fail := false
	c := &FactsCache{Every: 10 * time.Minute, Now: func() time.Time { return now },
		Load: func(context.Context) (map[string]any, []string, error) {
			if fail {
				return nil, nil, errors.New("facts broke")
			}
			loads++
			return map[string]any{"n": loads}, nil, nil
		}}
	ctx := context.Background()
	get := func() (int, time.Duration) {
		t.Helper()
		f, age, _, err := c.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return f["n"].(int), age
	}
	if n, age := get(); n != 1 || age != 0 {
		t.Fatal(n, age)
	}
	now = now.Add(9 * time.Minute)
	if n, age := get(); n != 1 || age != 9*time.Minute {
		t.Fatalf("within the bound: gathering %d, age %s", n, age)
	}
	now = now.Add(time.Minute)
	if n, _ := get(); n != 2 {
		t.Fatalf("at the bound: gathering %d", n)
	}
	now = now.Add(time.Hour)
	fail = true
	if _, _, _, err := c.Get(ctx); err == nil {
		t.Fatal("a failed gathering served stale facts")
	}
	fail = false
	if n, _ := get(); n != 3 {
		t.Fatal(n)
	}
	c.Every = 0
	if n, _ := get(); n != 4 {
		t.Fatal("facts_interval 0 must gather for every run")
	}
}

func TestConfigOurKeys(t *testing.T) {
	c, err := ParseConfig([]byte("manifests: [m.yaml]\n"), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.PollDuration != DefaultPoll || c.FactsDuration != DefaultFacts || c.ResultsQueue != DefaultQueue || !c.UseLastGood() {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = ParseConfig([]byte("manifests: [m.yaml]\npoll_interval: 0\nfacts_interval: 1h\nresults_queue: 5\nlast_good: false\n"), "a.yaml")
	if err != nil || c.PollDuration != 0 || c.FactsDuration != time.Hour || c.ResultsQueue != 5 || c.UseLastGood() {
		t.Fatalf("%v %+v", err, c)
	}
	for _, tc := range []struct{ src, want string }{
		{"manifests: [m.yaml]\npoll_interval: 10ms\n", "poll_interval"},
		{"manifests: [m.yaml]\nfacts_interval: often\n", "facts_interval"},
		{"manifests: [m.yaml]\nresults_queue: 0\n", "results_queue 0"},
	} {
		if _, err := ParseConfig([]byte(tc.src), "a.yaml"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v", tc.src, err)
		}
	}
}
