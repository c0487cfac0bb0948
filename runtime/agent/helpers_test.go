package agent

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// connect starts an embedded nats-server with JetStream and returns a
// connection to it and a context bounding the test.
func connect(t *testing.T) (*nats.Conn, jetstream.JetStream, context.Context) {
	t.Helper()
	nc, err := nats.Connect(natstest.Start(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return nc, js, ctx
}

// runLoop runs a.Loop until the returned stop is called; stop returns
// Loop's error.
func runLoop(t *testing.T, ctx context.Context, a *Agent) (stop func() error) {
	t.Helper()
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Loop(lctx) }()
	stopped := false
	var err error
	stop = func() error {
		if !stopped {
			cancel()
			err, stopped = <-done, true
		}
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// waitStored waits until the results stream holds n results of node.
func waitStored(t *testing.T, ctx context.Context, js jetstream.JetStream, node string, n uint64) {
	t.Helper()
	for {
		if st, err := js.Stream(ctx, ResultStream); err == nil {
			if info, err := st.Info(ctx, jetstream.WithSubjectFilter(ResultSubject(node))); err == nil && info.State.Subjects[ResultSubject(node)] >= n {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("%d results of %s were not stored", n, node)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readResults reads the first n results of node from the results stream.
func readResults(t *testing.T, ctx context.Context, js jetstream.JetStream, node string, n int) []Result {
	t.Helper()
	c, err := js.OrderedConsumer(ctx, ResultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{ResultSubject(node)}})
	if err != nil {
		t.Fatal(err)
	}
	var got []Result
	for range n {
		msg, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("result %d of %s: %v", len(got), node, err)
		}
		var r Result
		if err := json.Unmarshal(msg.Data(), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	return got
}
