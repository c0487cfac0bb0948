// Package natstest starts a real NATS server with JetStream inside a test
// process (the nats-server module, not a mock), listening on a random
// 127.0.0.1 port with its store in t.TempDir().
package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Start starts a server and returns its client URL; token, when not
// empty, is required of clients. The server stops with the test.
func Start(t testing.TB, token string) string {
	t.Helper()
	return StartWith(t, func(o *server.Options) { o.Authorization = token })
}

// StartWith is Start with the server's options adjusted by edit (users,
// nkeys, TLS, a JetStream domain).
func StartWith(t testing.TB, edit func(*server.Options)) string {
	t.Helper()
	o := &server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		JetStream: true,
		StoreDir:  t.TempDir(),
		NoLog:     true,
		NoSigs:    true,
	}
	if edit != nil {
		edit(o)
	}
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s.ClientURL()
}
