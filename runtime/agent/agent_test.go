package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/nats-io/nats.go/jetstream"
)

// ccmExample holds every key of CCM's documented agent configuration
// (its build/agent.yaml), with CCM's values.
const ccmExample = `
interval: 5m
health_check_interval: 1m
manifests:
  - /etc/choria/ccm/manifests/base.yaml
  - obj://ccm-manifests/app.tar.gz
external_data_url: obj://ccm-data/common
cache_dir: /etc/choria/ccm/source
monitor_port: 0
log_level: info
nats_context: CCM
`

func TestConfigCCMExample(t *testing.T) {
	c, err := ParseConfig([]byte(ccmExample), "agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.IntervalDuration != 5*time.Minute || c.HealthCheckDuration != time.Minute || c.JitterDuration != 30*time.Second {
		t.Fatalf("durations: %+v", c)
	}
	if len(c.Manifests) != 2 || c.NatsContext != "CCM" || c.CacheDir != "/etc/choria/ccm/source" || !c.PublishResults() {
		t.Fatalf("config: %+v", c)
	}
}

func TestConfigRefusals(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"manifests: [m.yaml]\ninterval: 10s\n", "below the minimum of 30s"},
		{"manifests: [m.yaml]\nintervall: 1m\n", "intervall"},
		{"interval: 1m\n", "at least one manifest source"},
		{"manifests: [m.yaml]\njitter: soon\n", "jitter \"soon\""},
		{"manifests: [m.yaml]\nregistration: carrier-pigeon\n", "want nats or jetstream"},
		{"manifests: [m.yaml]\nheartbeat: 1ms\n", "at least 1s"},
		{"manifests: [m.yaml]\nregistration: jetstream\nregistration_stream: a.b\n", "registration_stream \"a.b\""},
	} {
		_, err := ParseConfig([]byte(tc.src), "a.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "a.yaml") {
			t.Errorf("%q: got %v, want an error naming a.yaml and %q", tc.src, err, tc.want)
		}
	}
}

// fakeClock delivers interval ticks only when the test says so.
type fakeClock struct{ ch chan time.Time }

func (c *fakeClock) after(time.Duration) <-chan time.Time { return c.ch }

// TestLoop runs the agent against a real nats-server: a run at start, one
// when the obj:// source is replaced (heard with no JetStream consumer),
// one per interval tick, each published to the results stream; then it
// stops when its context ends.
func TestLoop(t *testing.T) {
	nc, js, ctx := connect(t)
	if err := EnsureStream(ctx, js); err != nil {
		t.Fatal(err)
	}
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "SITE"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, "site.tar.gz", []byte("v1")); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var runs []string
	ran := make(chan string, 10)
	clock := &fakeClock{ch: make(chan time.Time)}
	a := &Agent{
		Node:      "web1",
		Manifests: []string{"obj://SITE/site.tar.gz", "/nonexistent/m.yaml"},
		Interval:  time.Hour,
		Conn:      nc,
		JS:        js,
		After:     clock.after,
		Run: func(_ context.Context, m string) (*engine.Result, error) {
			mu.Lock()
			runs = append(runs, m)
			mu.Unlock()
			defer func() { ran <- m }()
			if strings.HasPrefix(m, "/nonexistent") {
				return nil, errors.New("open /nonexistent/m.yaml: no such file or directory")
			}
			return &engine.Result{
				Summary: session.Summary{Total: 2, Changed: 1, Failed: 1},
				Events:  []*session.Event{{Type: "file", Name: "/etc/motd", Failed: true, Error: []string{"permission denied"}}},
			}, nil
		},
	}
	stop := runLoop(t, ctx, a)

	waitRuns := func(n int) {
		t.Helper()
		for range n {
			select {
			case <-ran:
			case <-ctx.Done():
				t.Fatal("timed out waiting for a run")
			}
		}
	}
	waitRuns(2) // start: both manifests

	// Thousands of agents must not each cost a consumer on the bucket's stream.
	si, err := js.Stream(ctx, "OBJ_SITE")
	if err != nil {
		t.Fatal(err)
	}
	if si.CachedInfo().State.Consumers != 0 {
		t.Fatalf("watching the object made %d consumers", si.CachedInfo().State.Consumers)
	}

	if _, err := obs.PutBytes(ctx, "site.tar.gz", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	waitRuns(2)
	clock.ch <- time.Now()
	waitRuns(2)
	if err := stop(); err != nil {
		t.Fatalf("Loop: %v", err)
	}

	// The stream holds the node's last results, newest last.
	got := readResults(t, ctx, js, "web1", 6)
	wantReasons := []string{"start", "start", "changed: obj://SITE/site.tar.gz", "changed: obj://SITE/site.tar.gz", "interval", "interval"}
	for i, r := range got {
		if r.Reason != wantReasons[i] || r.Node != "web1" {
			t.Errorf("result %d: node %q reason %q, want web1 %q", i, r.Node, r.Reason, wantReasons[i])
		}
	}
	ok := got[0]
	if ok.Manifest != "obj://SITE/site.tar.gz" || ok.Summary == nil || ok.Summary.Changed != 1 || ok.Successful ||
		len(ok.Failed) != 1 || ok.Failed[0].Resource != "file#/etc/motd" || ok.Failed[0].Messages[0] != "permission denied" {
		t.Errorf("first result: %+v", ok)
	}
	bad := got[1]
	if bad.Summary != nil || !strings.Contains(bad.Error, "no such file") || bad.Successful {
		t.Errorf("unloadable source's result: %+v", bad)
	}
}

// TestCoalesce: a burst of changes during a run causes one more run, not one per change.
func TestCoalesce(t *testing.T) {
	nc, js, ctx := connect(t)
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "B"})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan string, 10)
	a := &Agent{
		Node: "n", Manifests: []string{"obj://B/k"}, Interval: time.Hour, Conn: nc,
		After: (&fakeClock{ch: make(chan time.Time)}).after,
		Run: func(rctx context.Context, m string) (*engine.Result, error) {
			started <- m
			select {
			case <-release:
			case <-rctx.Done():
			}
			return &engine.Result{}, nil
		},
	}
	stop := runLoop(t, ctx, a)
	<-started // first run, held
	for i := range 5 {
		if _, err := obs.PutBytes(ctx, "k", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the five notifications arrive
	release <- struct{}{}
	<-started // exactly one more run
	release <- struct{}{}
	select {
	case m := <-started:
		t.Fatalf("a third run of %s: the burst was not coalesced", m)
	case <-time.After(300 * time.Millisecond):
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// durClock hands out one channel per duration, so a test ticks the interval
// and the health-check timer separately.
type durClock struct {
	mu sync.Mutex
	ch map[time.Duration]chan time.Time
}

func (c *durClock) get(d time.Duration) chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch[d] == nil {
		c.ch[d] = make(chan time.Time)
	}
	return c.ch[d]
}

func (c *durClock) after(d time.Duration) <-chan time.Time { return c.get(d) }

// TestHealthRemediation: a CRITICAL health check triggers a run of that
// manifest only, published with the reason; an OK check triggers nothing.
func TestHealthRemediation(t *testing.T) {
	_, js, ctx := connect(t)
	if err := EnsureStream(ctx, js); err != nil {
		t.Fatal(err)
	}
	clock := &durClock{ch: map[time.Duration]chan time.Time{}}
	ran := make(chan string, 10)
	checked := make(chan string, 10)
	a := &Agent{
		Node: "h1", Manifests: []string{"ok.yaml", "sick.yaml"}, Interval: time.Hour, HealthInterval: time.Minute,
		JS: js, After: clock.after,
		Run: func(_ context.Context, m string) (*engine.Result, error) {
			ran <- m
			return &engine.Result{}, nil
		},
		Check: func(_ context.Context, m string) (*engine.Result, error) {
			checked <- m
			if m == "sick.yaml" {
				return &engine.Result{Summary: session.Summary{ChecksCritical: 1}}, nil
			}
			return &engine.Result{Summary: session.Summary{ChecksOK: 1}}, nil
		},
	}
	stop := runLoop(t, ctx, a)
	<-ran
	<-ran
	clock.get(time.Minute) <- time.Now()
	if a, b := <-checked, <-checked; a != "ok.yaml" || b != "sick.yaml" {
		t.Fatalf("checked %s, %s", a, b)
	}
	if m := <-ran; m != "sick.yaml" {
		t.Fatalf("remediated %s, want sick.yaml", m)
	}
	// The health timer is re-armed; the interval timer was not reset by it.
	clock.get(time.Minute) <- time.Now()
	<-checked
	<-checked
	<-ran
	select {
	case m := <-ran:
		t.Fatalf("unexpected run of %s", m)
	case <-time.After(100 * time.Millisecond):
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, r := range readResults(t, ctx, js, "h1", 4) {
		reasons = append(reasons, r.Manifest+" "+r.Reason)
	}
	want := "ok.yaml start|sick.yaml start|sick.yaml remediation: 1 health checks CRITICAL|sick.yaml remediation: 1 health checks CRITICAL"
	if got := strings.Join(reasons, "|"); got != want {
		t.Fatalf("published\n%s\nwant\n%s", got, want)
	}
}

// TestShippedExample keeps examples/agent/agent.yaml valid.
func TestShippedExample(t *testing.T) {
	src, err := os.ReadFile("../../examples/agent/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(src, "examples/agent/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.JitterDuration != 30*time.Second || c.Grants == "" || c.PollDuration != 30*time.Second || c.FactsDuration != 2*time.Minute || !c.UseLastGood() || c.ResultsQueue != 100 {
		t.Fatalf("%+v", c)
	}
}

// TestLatest: one row per node, its newest result, from the real stream.
func TestLatest(t *testing.T) {
	nc, js, ctx := connect(t)
	for _, node := range []string{"b", "a"} {
		a := &Agent{Node: node, Manifests: []string{"m.yaml"}, JS: js, Conn: nc,
			Run: func(context.Context, string) (*engine.Result, error) {
				return &engine.Result{Summary: session.Summary{Changed: len(node)}}, nil
			}}
		a.Once(ctx, "first")
		a.Once(ctx, "second")
	}
	rows, err := Latest(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Node != "a" || rows[1].Node != "b" || rows[0].Reason != "second" || rows[1].Reason != "second" {
		t.Fatalf("%+v", rows)
	}
}

// TestHeartbeat: a looping agent beats into a stream that keeps one per node.
func TestHeartbeat(t *testing.T) {
	nc, js, ctx := connect(t)
	a := &Agent{Node: "hb1", Manifests: []string{"m.yaml"}, Interval: time.Hour, Conn: nc, JS: js, HeartbeatEvery: 20 * time.Millisecond,
		After: (&fakeClock{ch: make(chan time.Time)}).after,
		Run:   func(context.Context, string) (*engine.Result, error) { return &engine.Result{}, nil }}
	stop := runLoop(t, ctx, a)
	var st jetstream.Stream
	var err error
	for {
		if st, err = js.Stream(ctx, HeartbeatStream); err == nil {
			if info, err := st.Info(ctx); err == nil && info.State.Msgs == 1 && info.State.LastSeq >= 3 {
				break // three beats, one kept
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no heartbeats")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	msg, err := st.GetLastMsgForSubject(ctx, HeartbeatSubject("hb1"))
	if err != nil {
		t.Fatal(err)
	}
	var hb Heartbeat
	if err := json.Unmarshal(msg.Data, &hb); err != nil || hb.Node != "hb1" || time.Since(hb.Time) > 10*time.Second {
		t.Fatalf("%+v %v", hb, err)
	}
	seen, err := LastSeen(ctx, js)
	if err != nil || !seen["hb1"].Equal(hb.Time) {
		t.Fatalf("LastSeen %v %v, want hb1 at %v", seen, err, hb.Time)
	}
	if info := st.CachedInfo(); info.Config.MaxAge != HeartbeatTTL || info.Config.MaxMsgsPerSubject != 1 {
		t.Fatalf("stream config %+v", info.Config)
	}
}
