package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestCatchUp: the object is replaced while the agent is cut off from a
// restarted server, so the change wake-up never reaches it; on reconnecting
// CatchUp sees that its last stored result is of the old bundle and runs.
// After a second restart with nothing changed it does not run.
func TestCatchUp(t *testing.T) {
	store := t.TempDir()
	s := startServer(t, -1, store)
	p := s.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() { s.Shutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	admin, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ajs, _ := jetstream.New(admin)
	obs, err := ajs.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "SITE", Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, "k", []byte("v1")); err != nil {
		t.Fatal(err)
	}

	// The agent reconnects well after the admin connection.
	reconnected := make(chan struct{}, 4)
	var a *Agent
	nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second), nats.ReconnectJitter(0, 0),
		nats.ReconnectHandler(func(*nats.Conn) { a.CatchUp(ctx); reconnected <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	type run struct{ reason string }
	ran := make(chan run, 10)
	var mu sync.Mutex
	var digest string
	a = &Agent{
		Node: "c1", Manifests: []string{"obj://SITE/k"}, Interval: time.Hour, Conn: nc, JS: js,
		After: (&fakeClock{ch: make(chan time.Time)}).after,
		Digest: func(string) string {
			mu.Lock()
			defer mu.Unlock()
			return digest
		},
	}
	a.Log = func(format string, args ...any) {
		if format == "run of %s (%s)" {
			ran <- run{reason: args[1].(string)}
		}
	}
	a.Run = func(ctx context.Context, m string) (*engine.Result, error) {
		b, err := obs.GetBytes(ctx, "k")
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		mu.Lock()
		digest = hex.EncodeToString(sum[:])
		mu.Unlock()
		return &engine.Result{}, nil
	}
	lctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Loop(lctx) }()
	if r := <-ran; r.reason != "start" {
		t.Fatalf("first run: %q", r.reason)
	}
	stored := func(want string) {
		t.Helper()
		for {
			if st, err := ajs.Stream(ctx, ResultStream); err == nil {
				if m, err := st.GetLastMsgForSubject(ctx, ResultSubject("c1")); err == nil && lastDigest(m.Data) == want {
					return
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("no stored result of bundle %s", want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	hex1 := sha256.Sum256([]byte("v1"))
	stored(hex.EncodeToString(hex1[:]))

	restart := func() {
		s.Shutdown()
		s.WaitForShutdown()
		s = startServer(t, p, store)
	}
	restart()
	// Replaced before the agent is back: it cannot hear of it.
	if _, err := obs.PutBytes(ctx, "k", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ran:
		if r.reason != "changed: obj://SITE/k" {
			t.Fatalf("run after reconnecting: %q", r.reason)
		}
	case <-ctx.Done():
		t.Fatal("no run after reconnecting to a server whose object changed")
	}
	hex2 := sha256.Sum256([]byte("v2"))
	stored(hex.EncodeToString(hex2[:]))
	for len(reconnected) > 0 {
		<-reconnected
	}

	// Nothing changed: no run.
	restart()
	select {
	case <-reconnected:
	case <-ctx.Done():
		t.Fatal("no reconnection")
	}
	select {
	case r := <-ran:
		t.Fatalf("a run (%q) after a restart with nothing changed", r.reason)
	case <-time.After(1500 * time.Millisecond):
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func lastDigest(b []byte) string {
	var r Result
	_ = json.Unmarshal(b, &r)
	return r.Digest
}
