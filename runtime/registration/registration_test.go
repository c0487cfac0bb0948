package registration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func connect(t testing.TB) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(natstest.Start(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ccmStream is the stream exactly as CCM's `registration init` makes it:
// no AllowDirect.
func ccmStream(t testing.TB, js jetstream.JetStream, maxAge time.Duration) {
	t.Helper()
	cfg := StreamConfig(DefaultStream, 1, maxAge)
	cfg.AllowDirect = false
	if _, err := js.CreateStream(ctxT(t), cfg); err != nil {
		t.Fatal(err)
	}
}

func TestWireFormatIsCCMs(t *testing.T) {
	e := &Entry{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.5", Port: 8080, Priority: 100, TTL: "30s", Annotations: map[string]string{"a": "b"}}
	b, _ := json.Marshal(e)
	want := `{"cluster":"prod","service":"web","protocol":"http","address":"10.0.0.5","port":8080,"priority":100,"annotations":{"a":"b"},"ttl":"30s"}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	// CCM's InstanceId for this tuple (fnv64a of "prodwebhttp10.0.0.58080").
	if got := Subject(e); got != "choria.ccm.registration.v1.prod.http.web.10_0_0_5."+e.InstanceID() || len(e.InstanceID()) != 16 {
		t.Fatal(got)
	}
	var back Entry
	if err := json.Unmarshal([]byte(`{"cluster":"c","service":"s","protocol":"p","address":"::1","port":null,"priority":1,"ttl":600000000000}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.Port != 0 || back.TTL != "10m0s" {
		t.Fatalf("%+v", back)
	}
	if b, _ := json.Marshal(back); !strings.Contains(string(b), `"port":null`) {
		t.Fatal(string(b))
	}
	for _, bad := range []Entry{
		{Cluster: "1x", Service: "s", Protocol: "p", Address: "1.2.3.4", Priority: 1},
		{Cluster: "c", Service: "s", Protocol: "p", Address: "host.example", Priority: 1},
		{Cluster: "c", Service: "s", Protocol: "p", Address: "1.2.3.4", Priority: 256},
		{Cluster: "c", Service: "s", Protocol: "p", Address: "1.2.3.4", Priority: 1, Port: 70000},
		{Cluster: "c", Service: "s", Protocol: "p", Address: "1.2.3.4", Priority: 1, TTL: "soon"},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
	if ttl, err := ParseTTL("2d"); err != nil || ttl != "48h0m0s" {
		t.Fatal(ttl, err)
	}
}

func TestPublishLookupRemoveDirectAndCCMStream(t *testing.T) {
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprint("direct=", direct), func(t *testing.T) {
			js := connect(t)
			ctx := ctxT(t)
			if direct {
				if _, err := Init(ctx, js, DefaultStream, 1, time.Minute); err != nil {
					t.Fatal(err)
				}
			} else {
				ccmStream(t, js, time.Minute)
			}
			p := &Publisher{NC: js.Conn(), JS: js, Stream: DefaultStream}
			for i, addr := range []string{"10.0.0.2", "10.0.0.1", "10.0.0.1"} {
				e := &Entry{Cluster: "prod", Service: "web", Protocol: "http", Address: addr, Port: int64(8080 + i), Priority: 10}
				if err := p.Publish(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			// Re-registering overwrites in place.
			if err := p.Publish(ctx, &Entry{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.2", Port: 8080, Priority: 20}); err != nil {
				t.Fatal(err)
			}
			if err := p.Publish(ctx, &Entry{Cluster: "dev", Service: "db", Protocol: "pg", Address: "10.0.0.9", Port: 5432, Priority: 1}); err != nil {
				t.Fatal(err)
			}
			got, info, err := Lookup(ctx, js, DefaultStream, "prod", "*", "web", "")
			if err != nil {
				t.Fatal(err)
			}
			if info.Direct != direct || (!direct && !strings.Contains(info.Note, "ccm registration init")) {
				t.Fatalf("%+v", info)
			}
			var s []string
			for _, e := range got {
				s = append(s, fmt.Sprintf("%s:%d/%d", e.Address, e.Port, e.Priority))
			}
			if strings.Join(s, " ") != "10.0.0.1:8081/10 10.0.0.1:8082/10 10.0.0.2:8080/20" {
				t.Fatal(s)
			}
			if err := Remove(ctx, js, DefaultStream, &Entry{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.2", Port: 8080, Priority: 1}); err != nil {
				t.Fatal(err)
			}
			got, _, err = Lookup(ctx, js, DefaultStream, "*", "*", "*", "10.0.0.2")
			if err != nil || len(got) != 0 {
				t.Fatal(got, err)
			}
			got, _, err = Lookup(ctx, js, DefaultStream, "nope", "*", "*", "*")
			if err != nil || got == nil || len(got) != 0 {
				t.Fatal(got, err)
			}
		})
	}
}

func TestTTLExpiryAndWatch(t *testing.T) {
	js := connect(t)
	ctx := ctxT(t)
	if _, err := Init(ctx, js, DefaultStream, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	events, err := Watch(wctx, js, DefaultStream, "prod", "", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &Publisher{NC: js.Conn(), JS: js, Stream: DefaultStream}
	short := &Entry{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.1", Port: 80, Priority: 1, TTL: "1s"}
	long := &Entry{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.2", Port: 80, Priority: 1, TTL: "never"}
	for _, e := range []*Entry{short, long} {
		if err := p.Publish(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	next := func() Event {
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no watch event")
		}
		return Event{}
	}
	if a, b := next(), next(); a.Action != "register" || b.Action != "register" || a.Entry.Address != "10.0.0.1" || b.Entry.TTL != "never" {
		t.Fatalf("%+v %+v", a, b)
	}
	ev := next()
	if ev.Action != "remove" || ev.Reason != "MaxAge" || ev.Entry.Address != "10.0.0.1" || ev.Entry.Cluster != "prod" {
		t.Fatalf("%+v", ev)
	}
	got, _, err := Lookup(ctx, js, DefaultStream, "", "", "", "")
	if err != nil || len(got) != 1 || got[0].Address != "10.0.0.2" {
		t.Fatal(got, err)
	}
}

func TestPrometheusFileSD(t *testing.T) {
	es := Entries{
		{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.1", Port: 8080, Annotations: map[string]string{"prometheus.io/scrape": "true", "team": "a", "__x": "y", "bad-key": "z", "empty": ""}},
		{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.2", Port: 8080, Annotations: map[string]string{"prometheus.io/scrape": "true"}},
		{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.3", Port: 8080},
		{Cluster: "prod", Service: "node", Protocol: "prometheus", Address: "::1", Port: 9100},
		{Cluster: "prod", Service: "node", Protocol: "prometheus", Address: "10.0.0.4", Port: 9100, Annotations: map[string]string{"prometheus.io/scrape": "false"}},
		{Cluster: "prod", Service: "prometheus", Protocol: "http", Address: "10.0.0.5"},
	}
	got, err := es.PrometheusFileSD()
	if err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "labels": {
      "cluster": "prod",
      "protocol": "http",
      "service": "web",
      "team": "a"
    },
    "targets": [
      "10.0.0.1:8080",
      "10.0.0.2:8080"
    ]
  },
  {
    "labels": {
      "cluster": "prod",
      "protocol": "prometheus",
      "service": "node"
    },
    "targets": [
      "[::1]:9100"
    ]
  }
]`
	if got != want {
		t.Fatal(got)
	}
	if got, _ := (Entries{}).PrometheusFileSD(); got != "[]" {
		t.Fatal(got)
	}
}

// TestLookupPastTheServersBatchLimit: more than 1024 matching subjects,
// where the server refuses one batched direct get (and CCM's lookup
// fails), are read through a consumer; past MaxEntries the lookup fails
// saying so.
func TestLookupPastTheServersBatchLimit(t *testing.T) {
	js := connect(t)
	ctx := ctxT(t)
	if _, err := Init(ctx, js, DefaultStream, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	const n = 1100
	for i := range n {
		msg, _ := Message(&Entry{Cluster: "c", Service: "s", Protocol: "p", Address: fmt.Sprintf("10.0.%d.%d", i/256, i%256), Port: 80, Priority: 1}, DefaultStream, true)
		if _, err := js.PublishMsgAsync(msg); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		t.Fatal("publishing timed out")
	}
	got, info, err := Lookup(ctx, js, DefaultStream, "c", "", "", "")
	if err != nil || len(got) != n || info.Direct || !strings.Contains(info.Note, "more than 1024") {
		t.Fatalf("%d entries, %+v, %v", len(got), info, err)
	}
	// Under the server's limit a direct get answers.
	if got, info, err := Lookup(ctx, js, DefaultStream, "c", "", "", "10.0.1.7"); err != nil || len(got) != 1 || !info.Direct {
		t.Fatalf("%v %+v %v", got, info, err)
	}
	defer func(m int) { MaxEntries = m }(MaxEntries)
	MaxEntries = 1000
	if _, _, err := Lookup(ctx, js, DefaultStream, "c", "", "", ""); err == nil || !strings.Contains(err.Error(), "narrow the filter") {
		t.Fatal(err)
	}
}

// TestWatchWithoutConsumer: when the stream refuses another consumer the
// watch falls back to one without: current entries, live registrations,
// and removals noticed by the periodic lookup (reason Gone).
func TestWatchWithoutConsumer(t *testing.T) {
	js := connect(t)
	ctx := ctxT(t)
	cfg := StreamConfig(DefaultStream, 1, time.Minute)
	cfg.MaxConsumers = 1
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { ResyncEvery = d }(ResyncEvery)
	ResyncEvery = 200 * time.Millisecond
	p := &Publisher{NC: js.Conn(), JS: js, Stream: DefaultStream}
	old := &Entry{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.1", Port: 80, Priority: 1}
	if err := p.Publish(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := Watch(ctx, js, DefaultStream, "", "", "", "", nil); err != nil { // takes the one consumer
		t.Fatal(err)
	}
	var notes []string
	events, err := Watch(ctx, js, DefaultStream, "prod", "", "", "", func(s string) { notes = append(notes, s) })
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "refuses another consumer") {
		t.Fatal(err, notes)
	}
	next := func() Event {
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no watch event")
		}
		return Event{}
	}
	if ev := next(); ev.Action != "register" || ev.Entry.Address != "10.0.0.1" {
		t.Fatalf("%+v", ev)
	}
	if err := p.Publish(ctx, &Entry{Cluster: "prod", Service: "web", Protocol: "http", Address: "10.0.0.2", Port: 80, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Action != "register" || ev.Entry.Address != "10.0.0.2" {
		t.Fatalf("%+v", ev)
	}
	if err := Remove(ctx, js, DefaultStream, old); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.Action != "remove" || ev.Reason != "Gone" || ev.Entry.Address != "10.0.0.1" {
		t.Fatalf("%+v", ev)
	}
}

func TestFromMap(t *testing.T) {
	e, err := FromMap(map[string]any{"cluster": "c", "service": "s", "protocol": "p", "address": "::1", "port": 8080, "priority": "7", "ttl": "1d", "annotations": map[string]any{"n": 1, "b": true, "z": nil}})
	if err != nil || e.Port != 8080 || e.Priority != 7 || e.TTL != "24h0m0s" || e.Annotations["n"] != "1" || e.Annotations["b"] != "true" || e.Annotations["z"] != "" || e.Validate() != nil {
		t.Fatalf("%+v %v", e, err)
	}
	for _, bad := range []map[string]any{
		{"cluster": 1},
		{"port": 80.5},
		{"port": "eighty"},
		{"port": 0},
		{"ttl": 10},
		{"annotations": []any{"a"}},
	} {
		if _, err := FromMap(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
