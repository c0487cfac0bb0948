package registration

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestWatchersScale measures N concurrent watchers (one ordered consumer
// each, CCM's design) on one stream: the time to start them, the memory
// the process (server and clients) grows by, and the time until one
// publish reached all of them. Run with CCM_REG_WATCHERS=1000 (skipped
// otherwise); numbers in docs/registration.md.
func TestWatchersScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CCM_REG_WATCHERS"))
	if n == 0 {
		t.Skip("set CCM_REG_WATCHERS=N to measure N watchers")
	}
	url := natstest.Start(t, "")
	conns := make([]jetstream.JetStream, 20)
	for i := range conns {
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		conns[i], _ = jetstream.New(nc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := Init(ctx, conns[0], DefaultStream, 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	chans := make([]<-chan Event, n)
	fallbacks := 0
	for i := range n {
		ch, err := Watch(ctx, conns[i%len(conns)], DefaultStream, "", "", "", "", func(string) { fallbacks++ })
		if err != nil {
			t.Fatalf("watcher %d: %v", i+1, err)
		}
		chans[i] = ch
	}
	started := time.Since(start)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	p := &Publisher{NC: conns[0].Conn(), JS: conns[0], Stream: DefaultStream}
	start = time.Now()
	if err := p.Publish(ctx, &Entry{Cluster: "c", Service: "s", Protocol: "p", Address: "10.0.0.1", Port: 1, Priority: 1}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, ch := range chans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ch:
			case <-ctx.Done():
			}
		}()
	}
	wg.Wait()
	si, _ := conns[0].Stream(ctx, DefaultStream)
	info, _ := si.Info(ctx)
	t.Logf("%d watchers: started in %s, heap +%.1f MiB (%.1f KiB each), one publish reached all in %s, stream consumers %d, watchers without a consumer %d",
		n, started.Round(time.Millisecond), float64(after.HeapInuse-before.HeapInuse)/(1<<20), float64(after.HeapInuse-before.HeapInuse)/1024/float64(n), time.Since(start).Round(time.Millisecond), info.State.Consumers, fallbacks)
}
