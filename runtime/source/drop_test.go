package source

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// TestFetchFailsWhenTheServerGoes: a request in flight when the server
// restarts fails at once instead of waiting out the fetch timeout: its
// answer is lost with the connection, and reconnecting does not bring it
// back (the fetch's connection serves one run; an agent runs again when
// the server is back, agent.CatchUp). The JetStream API is answered by nobody here (a subscriber
// on the context's API prefix that never replies), so the fetch is
// in flight when the server shuts down.
func TestFetchFailsWhenTheServerGoes(t *testing.T) {
	start := func(port int) *server.Server {
		s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("nats-server not ready")
		}
		t.Cleanup(s.Shutdown)
		return s
	}
	s := start(-1)
	silent, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	asked := make(chan struct{}, 1)
	if _, err := silent.Subscribe("silent.api.>", func(*nats.Msg) {
		select {
		case asked <- struct{}{}:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := silent.Flush(); err != nil {
		t.Fatal(err)
	}
	path := useContext(t, map[string]any{"url": s.ClientURL(), "jetstream_api_prefix": "silent.api"})
	f := New(Options{Context: path, Cache: t.TempDir(), Timeout: 30 * time.Second})
	defer f.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := f.Bundle(context.Background(), "obj://SITE/site.tar.gz", "")
		errc <- err
	}()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the fetch never asked the JetStream API")
	}
	port := s.Addr().(*net.TCPAddr).Port
	t0 := time.Now()
	s.Shutdown()
	s.WaitForShutdown()
	start(port)
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "obj://SITE/site.tar.gz") {
			t.Fatalf("fetch: %v", err)
		}
		if d := time.Since(t0); d > 5*time.Second {
			t.Fatalf("the fetch failed %v after the server went", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fetch still waits 10s after the server went (its timeout is 30s)")
	}
}
