package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/agent"
	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestAgentCatchesUpAfterRestart: the server restarts, and the bundle is
// replaced before the agent is back (its change wake-up is lost); on
// reconnecting the agent sees that the object is not the bundle its last
// run used, runs, converges and reports.
func TestAgentCatchesUpAfterRestart(t *testing.T) {
	store := t.TempDir()
	startServer := func(port int) *server.Server {
		s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: store, NoLog: true, NoSigs: true})
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
	s := startServer(-1)
	port := s.Addr().(*net.TCPAddr).Port
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "nats", "context"), 0o755)
	b, _ := json.Marshal(map[string]string{"url": s.ClientURL()})
	os.WriteFile(filepath.Join(cfg, "nats", "context", "CCM.json"), b, 0o600)
	env := []string{"XDG_CONFIG_HOME=" + cfg, "CCM_BUNDLE_CACHE=" + t.TempDir()}
	// The test's connection is back long before the agent's (nats.go
	// waits 2 s between attempts on one server by default).
	nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	ccmOK(t, work, env, "bundle", "pack", vendorBundle(t, out, "v1"), "--out", "v1.tar.gz")
	ccmOK(t, work, env, "bundle", "publish", "v1.tar.gz", "obj://SITE/site.tar.gz")
	ccmOK(t, work, env, "bundle", "pack", vendorBundle(t, out, "v2"), "--out", "v2.tar.gz")
	os.WriteFile(filepath.Join(work, "grants.yaml"), []byte(`
fs_read: ["`+work+`/**"]
fs_write: ["`+out+`/**"]
net: ["nats:obj/SITE"]
users: true
`), 0o644)
	os.WriteFile(filepath.Join(work, "agent.yaml"), []byte(`
interval: 1h
manifests: [obj://SITE/site.tar.gz]
cache_dir: `+filepath.Join(work, "cache")+`
grants: `+filepath.Join(work, "grants.yaml")+`
node: web1
`), 0o644)

	cmd := ccmtest.Command(t, work, env, "agent", "--config", "agent.yaml")
	var mu sync.Mutex
	var stderr strings.Builder
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return stderr.Write(p)
	})
	logs := func() string {
		mu.Lock()
		defer mu.Unlock()
		return stderr.String()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	a1, _ := os.ReadFile(filepath.Join(work, "v1.tar.gz"))
	a2, _ := os.ReadFile(filepath.Join(work, "v2.tar.gz"))
	stored := func(digest string) {
		t.Helper()
		for {
			if st, err := js.Stream(ctx, agent.ResultStream); err == nil {
				if m, err := st.GetLastMsgForSubject(ctx, agent.ResultSubject("web1")); err == nil {
					var r agent.Result
					if json.Unmarshal(m.Data, &r) == nil && r.Digest == digest && r.Successful {
						return
					}
				}
			}
			if ctx.Err() != nil {
				t.Fatalf("no stored result of bundle %s\n%s", digest, logs())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	stored(bundle.Digest(a1))

	s.Shutdown()
	s.WaitForShutdown()
	time.Sleep(300 * time.Millisecond) // the agent's first, immediate attempt fails
	startServer(port)
	obs, err := js.ObjectStore(ctx, "SITE")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obs.PutBytes(ctx, "site.tar.gz", a2); err != nil {
		t.Fatal(err)
	}
	stored(bundle.Digest(a2))
	if b, _ := os.ReadFile(filepath.Join(out, "vendor")); string(b) != "v2" {
		t.Fatalf("vendor file %q after catching up\n%s", b, logs())
	}
	if !strings.Contains(logs(), "after reconnecting: obj://SITE/site.tar.gz changed while NATS was unreachable") {
		t.Fatalf("the run was not the catch-up's:\n%s", logs())
	}
}
