package agent

import (
	"context"
	"net"
	"testing"
	"time"

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
