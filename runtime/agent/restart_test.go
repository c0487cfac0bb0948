package agent

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func startServer(t *testing.T, port int, store string) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: store, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	return s
}

// TestServerRestart: the server is restarted (same port and store) while
// the agent waits; the agent reconnects, hears the next change of its
// object and publishes that run's result.
func TestServerRestart(t *testing.T) {
	store := t.TempDir()
	s := startServer(t, -1, store)
	url := s.ClientURL()
	p := s.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() { s.Shutdown() })

	reconnected := make(chan struct{}, 1)
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "SITE", Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 10)
	a := &Agent{
		Node: "r1", Manifests: []string{"obj://SITE/k"}, Interval: time.Hour, Conn: nc, JS: js,
		After: (&fakeClock{ch: make(chan time.Time)}).after,
		Run: func(_ context.Context, m string) (*engine.Result, error) {
			ran <- m
			return &engine.Result{}, nil
		},
	}
	stop := runLoop(t, ctx, a)
	<-ran
	// The start result is stored before the server goes away.
	waitStored(t, ctx, js, "r1", 1)

	s.Shutdown()
	s.WaitForShutdown()
	s = startServer(t, p, store)
	select {
	case <-reconnected:
	case <-ctx.Done():
		t.Fatal("no reconnection")
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(ctx, "SITE")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, "k", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-ctx.Done():
		t.Fatal("the change after the restart was not heard")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, r := range readResults(t, ctx, js, "r1", 2) {
		reasons = append(reasons, r.Reason)
	}
	if reasons[0] != "start" || reasons[1] != "changed: obj://SITE/k" {
		t.Fatalf("published %v", reasons)
	}
}

// gate is a dialer the test can close: while closed, the agent cannot
// reconnect, so what happens on the server meanwhile goes unheard.
type gate struct {
	mu     sync.Mutex
	closed bool
}

func (g *gate) set(closed bool) { g.mu.Lock(); g.closed = closed; g.mu.Unlock() }

func (g *gate) Dial(network, address string) (net.Conn, error) {
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return nil, errors.New("gate closed")
	}
	return net.Dial(network, address)
}

// TestCatchUpAfterOutage: a bundle replaced while the agent could not
// reach the server is applied as soon as it reconnects (its digest differs
// from the bundle the last run used); after an outage with nothing
// changed, no run.
func TestCatchUpAfterOutage(t *testing.T) {
	store := t.TempDir()
	s := startServer(t, -1, store)
	port := s.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() { s.Shutdown() })
	admin, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ajs, _ := jetstream.New(admin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	obs, err := ajs.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "SITE", Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	put := func(v string) {
		t.Helper()
		if _, err := obs.PutBytes(ctx, "site.tar.gz", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	put("v1")

	g := &gate{}
	reconnected := make(chan struct{}, 10)
	nc, err := nats.Connect(s.ClientURL(), nats.SetCustomDialer(g), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) { reconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var mu sync.Mutex
	var applied string // what the stub run "applied": the object's bytes
	ran := make(chan string, 10)
	a := &Agent{
		Node: "c1", Manifests: []string{"obj://SITE/site.tar.gz"}, Interval: time.Hour, Conn: nc,
		After: (&fakeClock{ch: make(chan time.Time)}).after,
		Run: func(rctx context.Context, m string) (*engine.Result, error) {
			b, err := obs.GetBytes(rctx, "site.tar.gz")
			if err != nil {
				return nil, err
			}
			mu.Lock()
			applied = string(b)
			mu.Unlock()
			ran <- string(b)
			return &engine.Result{}, nil
		},
		Digest: func(string) string { mu.Lock(); defer mu.Unlock(); return bundle.Digest([]byte(applied)) },
	}
	stop := runLoop(t, ctx, a)
	if v := <-ran; v != "v1" {
		t.Fatal(v)
	}
	outage := func(change func()) {
		t.Helper()
		g.set(true)
		s.Shutdown()
		s.WaitForShutdown()
		s = startServer(t, port, store)
		for !admin.IsConnected() {
			time.Sleep(10 * time.Millisecond)
		}
		change()
		g.set(false)
		select {
		case <-reconnected:
		case <-ctx.Done():
			t.Fatal("no reconnection")
		}
	}
	outage(func() { put("v2") })
	select {
	case v := <-ran:
		if v != "v2" {
			t.Fatalf("ran with %q", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the bundle replaced during the outage was not applied after reconnecting")
	}
	outage(func() {})
	select {
	case v := <-ran:
		t.Fatalf("a run (%q) after an outage with nothing changed", v)
	case <-time.After(300 * time.Millisecond):
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
