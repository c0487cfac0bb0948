package agent

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/natstest"
	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestFleetScale runs CCM_FLEET_AGENTS agents (goroutines, each with its
// own NATS connection and identity) against one embedded nats-server,
// publishes a new bundle object and reports how long until every agent has
// run and its result is stored. The run itself is not applied (RunFunc
// returns at once): this measures change detection and reporting, not the
// engine. Skipped unless CCM_FLEET_AGENTS is set:
//
//	CCM_FLEET_AGENTS=1000 go test -run TestFleetScale -v ./runtime/agent/
func TestFleetScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CCM_FLEET_AGENTS"))
	if n <= 0 {
		t.Skip("set CCM_FLEET_AGENTS=N to run N agents")
	}
	url := natstest.Start(t, "")
	admin, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ajs, _ := jetstream.New(admin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := EnsureStream(ctx, ajs); err != nil {
		t.Fatal(err)
	}
	obs, err := ajs.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "FLEET"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, "site.tar.gz", []byte("v1")); err != nil {
		t.Fatal(err)
	}

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var changed atomic.Int64
	allChanged := make(chan struct{})
	started := make(chan struct{}, n)
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i := range n {
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		a := &Agent{
			Node: fmt.Sprintf("node%04d", i), Manifests: []string{"obj://FLEET/site.tar.gz"}, Interval: time.Hour,
			Conn: nc, JS: js, After: (&fakeClock{ch: make(chan time.Time)}).after,
		}
		a.Run = func(context.Context, string) (*engine.Result, error) {
			return &engine.Result{}, nil
		}
		first := true
		a.Log = func(format string, args ...any) {
			if len(args) == 2 && format == "run of %s (%s)" {
				if first {
					first = false
					started <- struct{}{}
				} else if changed.Add(1) == int64(n) {
					close(allChanged)
				}
			}
		}
		a.streamOK = true
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.Loop(lctx) }()
	}
	for range n {
		<-started
	}
	// Wait for the start results to be stored.
	st, _ := ajs.Stream(ctx, ResultStream)
	waitMsgs := func(want uint64) time.Time {
		for {
			info, err := st.Info(ctx)
			if err == nil && info.State.Msgs >= want {
				return time.Now()
			}
			if ctx.Err() != nil {
				t.Fatalf("results stored: want %d", want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitMsgs(uint64(n))
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)

	t0 := time.Now()
	if _, err := obs.PutBytes(ctx, "site.tar.gz", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	<-allChanged
	tRun := time.Since(t0)
	tStored := waitMsgs(uint64(2 * n)).Sub(t0)
	si, _ := ajs.Stream(ctx, "OBJ_FLEET")
	t.Logf("%d agents: all ran %v after the publish, all results stored after %v; heap per agent (server and clients in one process) %d KiB; consumers on the bucket's stream: %d",
		n, tRun.Round(time.Millisecond), tStored.Round(time.Millisecond), (after.HeapAlloc-before.HeapAlloc)/uint64(n)/1024, si.CachedInfo().State.Consumers)
	stop()
	wg.Wait()
}
