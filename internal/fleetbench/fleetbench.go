// Package fleetbench measures a fleet of ccm agents against one real
// nats-server with JetStream: how long until every node has converged on a
// newly published bundle and its result is stored in CCM_RESULTS, what an
// agent costs in memory, what the server costs, and what happens when the
// server restarts mid-rollout or the bundle is bad (docs/performance.md,
// "Fleet: 1000 agents").
//
// The fleet is made of processes: one nats-server (this test binary
// re-executed in the server role, so its CPU and memory are its own) and a
// few agent hosts (the test binary in the agents role), each running many
// agents as goroutines that share one plugin host: one compilation cache and
// one instance of each built-in plugin per process, as a real host has one
// ccm. Every agent is a runtime/agent.Agent with its own node identity, its
// own NATS connection, its own directory and grants confined to it, and it
// applies the real bundle with the real engine and the real built-in WASM
// plugins.
//
// Run it with the test (see fleet_test.go):
//
//	CCM_FLEET_AGENTS=1000 go test -run TestFleet -v -timeout 30m ./internal/fleetbench/
package fleetbench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ccm-dev/ccm/host"
	"github.com/ccm-dev/ccm/plugins"
	"github.com/ccm-dev/ccm/runtime/agent"
	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/ccm-dev/ccm/runtime/data"
	"github.com/ccm-dev/ccm/runtime/engine"
	"github.com/ccm-dev/ccm/runtime/facts"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Bucket and Key are where the fleet's bundle is published.
const (
	Bucket   = "FLEET"
	Key      = "site.tar.gz"
	Manifest = "obj://" + Bucket + "/" + Key
)

// Role is the environment variable that makes the test binary a server or
// an agent host instead of running tests (see Main).
const Role = "CCM_FLEETBENCH_ROLE"

// NodeName is node i's identity.
func NodeName(i int) string { return fmt.Sprintf("node%04d", i) }

// NodeDir is node i's own directory under root: its bundle cache in
// cache/, the files it manages in out/.
func NodeDir(root string, i int) string { return filepath.Join(root, "nodes", NodeName(i)) }

// OutDir is the directory node i's bundle writes to (Data.node_dir).
func OutDir(root string, i int) string { return filepath.Join(NodeDir(root, i), "out") }

// Grant is node i's grant: it reads and writes only its own directory and
// reaches only the fleet's bucket.
func Grant(root string, i int) string {
	d := NodeDir(root, i)
	return fmt.Sprintf("fs_read: [%q]\nfs_write: [%q]\nnet: [\"nats:obj/%s\"]\nusers: true\n", d+"/**", d+"/out/**", Bucket)
}

// Main serves the role named by $CCM_FLEETBENCH_ROLE and exits; it returns
// when the variable is unset (the test binary then runs its tests). Call it
// first in TestMain.
func Main() {
	var err error
	switch os.Getenv(Role) {
	case "":
		return
	case "server":
		err = serveNATS()
	case "agents":
		err = hostAgents()
	default:
		err = fmt.Errorf("unknown %s %q", Role, os.Getenv(Role))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fleetbench %s: %v\n", os.Getenv(Role), err)
		os.Exit(1)
	}
	os.Exit(0)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// serveNATS runs nats-server with JetStream on $FB_PORT, store $FB_STORE,
// until SIGTERM.
func serveNATS() error {
	o := &server.Options{
		Host:      "127.0.0.1",
		Port:      envInt("FB_PORT", -1),
		HTTPHost:  "127.0.0.1",
		HTTPPort:  envInt("FB_HTTP_PORT", 0),
		JetStream: true,
		StoreDir:  os.Getenv("FB_STORE"),
		NoLog:     true,
		NoSigs:    true,
	}
	s, err := server.NewServer(o)
	if err != nil {
		return err
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		return fmt.Errorf("not ready")
	}
	fmt.Println("ready", s.ClientURL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}

// Stats is what an agent host answers on StatsSubject(proc).
type Stats struct {
	Agents     int    `json:"agents"`
	HeapAlloc  uint64 `json:"heap_alloc"`
	HeapInuse  uint64 `json:"heap_inuse"`
	Sys        uint64 `json:"sys"`
	Goroutines int    `json:"goroutines"`
	RSS        uint64 `json:"rss"` // VmRSS, bytes
	HWM        uint64 `json:"hwm"` // VmHWM, bytes
	Runs       int64  `json:"runs"`
	Running    int64  `json:"running"` // runs started and not finished, waiting for a slot or applying
}

// StatsSubject is where agent host proc answers with its Stats.
func StatsSubject(proc int) string { return fmt.Sprintf("fleetbench.stats.%d", proc) }

// hostAgents runs agents $FB_FIRST..$FB_FIRST+$FB_COUNT-1 of the fleet at
// $FB_ROOT against $FB_URL until SIGTERM; at most $FB_PARALLEL of them
// apply at once.
func hostAgents() error {
	root, url := os.Getenv("FB_ROOT"), os.Getenv("FB_URL")
	first, count := envInt("FB_FIRST", 0), envInt("FB_COUNT", 0)
	proc := envInt("FB_PROC", 0)
	parallel := max(1, envInt("FB_PARALLEL", 2))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	plugs, err := host.New(host.WithBuiltins(plugins.Modules()))
	if err != nil {
		return err
	}
	defer plugs.Close(context.Background())
	keys, err := bundle.LoadTrusted(filepath.Join(root, "trusted.keys"))
	if err != nil {
		return err
	}
	policy := bundle.Policy{Trusted: keys, RequireSignature: true}
	// The simulated nodes share one machine, so their system facts are the
	// same: they are gathered once per process (what one gathering costs
	// is in the report), not once per run as on a real host.
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000 ")+format+"\n", args...)
	}
	t0 := time.Now()
	fts, _, err := facts.Load(ctx, facts.Options{Dirs: []string{}})
	if err != nil {
		return err
	}
	logf("facts gathered in %v", time.Since(t0).Round(time.Millisecond))

	sem := make(chan struct{}, parallel)
	var runs sync.Mutex
	var nruns, running int64
	var wg sync.WaitGroup
	var conns []*nats.Conn
	for i := first; i < first+count; i++ {
		node := NodeName(i)
		g, err := trust.ParseGrant([]byte(Grant(root, i)))
		if err != nil {
			return err
		}
		grants := trust.Chain{g}
		a := &agent.Agent{
			Node:           node,
			Manifests:      []string{Manifest},
			Interval:       time.Hour,
			Jitter:         10 * time.Minute,
			HeartbeatEvery: agent.DefaultHeartbeat,
			Log: func(format string, args ...any) {
				logf(node+": "+format, args...)
			},
		}
		nc, err := nats.Connect(url, nats.Name("ccm agent "+node),
			nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1),
			nats.ReconnectWait(500*time.Millisecond), nats.ReconnectJitter(time.Second, time.Second))
		if err != nil {
			return err
		}
		conns = append(conns, nc)
		js, err := jetstream.New(nc)
		if err != nil {
			return err
		}
		a.Conn, a.JS = nc, js
		var mu sync.Mutex
		digests := map[string]string{}
		cached := map[string][]source.Fallback{}
		a.Digest = func(m string) string {
			mu.Lock()
			defer mu.Unlock()
			return digests[m]
		}
		a.Cached = func(m string) []source.Fallback {
			mu.Lock()
			defer mu.Unlock()
			return cached[m]
		}
		env := data.Environ(nil)
		nodeData := map[string]any{"node_dir": OutDir(root, i)}
		cache := filepath.Join(NodeDir(root, i), "cache")
		// What cmd/ccm's agent does for one run (serve in cmd/ccm/agent.go),
		// with the facts gathered once and no printer.
		a.Run = func(ctx context.Context, manifest string) (*engine.Result, error) {
			runs.Lock()
			running++
			runs.Unlock()
			defer func() {
				runs.Lock()
				running--
				runs.Unlock()
			}()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			defer func() { <-sem }()
			mu.Lock()
			defer mu.Unlock()
			runs.Lock()
			nruns++
			runs.Unlock()
			// last_good is on by default in ccm agent: under cache_dir.
			f := source.New(source.Options{Context: filepath.Join(root, "nats.json"), Cache: cache, Policy: policy,
				LastGood: filepath.Join(cache, "last-good"),
				Warn:     func(err error) { logf("%s: warning: %v", node, err) }})
			defer f.Close()
			eng := engine.New(engine.Options{
				Plugins:      plugs,
				Facts:        fts,
				Environ:      env,
				ExternalData: nodeData,
				Grants:       grants,
				Remote:       remote(f),
			})
			delete(digests, manifest)
			delete(cached, manifest)
			defer func() { cached[manifest] = f.Fallbacks() }()
			res, err := eng.Run(ctx, manifest)
			if x, berr := f.Bundle(ctx, manifest, ""); berr == nil {
				digests[manifest] = x.Digest
			}
			return res, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Loop(ctx); err != nil {
				logf("%s: %v", node, err)
			}
		}()
	}
	if len(conns) > 0 {
		_, err := conns[0].Subscribe(StatsSubject(proc), func(m *nats.Msg) {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			rss, hwm := procStatus(os.Getpid())
			runs.Lock()
			n, r := nruns, running
			runs.Unlock()
			b, _ := json.Marshal(Stats{Agents: count, HeapAlloc: ms.HeapAlloc, HeapInuse: ms.HeapInuse, Sys: ms.Sys,
				Goroutines: runtime.NumGoroutine(), RSS: rss, HWM: hwm, Runs: n, Running: r})
			_ = m.Respond(b)
		})
		if err != nil {
			return err
		}
	}
	fmt.Println("started")
	<-ctx.Done()
	wg.Wait()
	for _, nc := range conns {
		nc.Close()
	}
	return nil
}

// remote is cmd/ccm's remoteHook: the scope's net grant must allow the
// bucket.
func remote(f *source.Fetcher) func(ctx context.Context, name, pin string, grants trust.Chain) (string, string, error) {
	return func(ctx context.Context, name, pin string, grants trust.Chain) (string, string, error) {
		ref, err := source.Parse(name)
		if err != nil {
			return "", "", fmt.Errorf("bundle %v", err)
		}
		if t := ref.NetTarget(); !grants.Allows(trust.Net, t) {
			return "", "", fmt.Errorf("bundle %s: refused: the scope's grants do not allow net %q", ref, t)
		}
		x, err := f.Bundle(ctx, name, pin)
		if err != nil {
			return "", "", err
		}
		return x.Manifest, x.Root, nil
	}
}

// procStatus returns VmRSS and VmHWM of pid in bytes.
func procStatus(pid int) (rss, hwm uint64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseUint(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v << 10
		case "VmHWM:":
			hwm = v << 10
		}
	}
	return rss, hwm
}

// ProcStatus is procStatus for the coordinator.
func ProcStatus(pid int) (rss, hwm uint64) { return procStatus(pid) }

// CPUTime is the user plus system CPU time pid has used.
func CPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+2:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	// Fields 14 and 15 of stat (utime, stime), counted from after the
	// command: 12 and 13, in clock ticks (100 a second on Linux).
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

// Bundle packs a bundle whose manifest manages files files under each
// node's own directory, with content naming version.
func Bundle(dir, version string, files int) ([]byte, error) {
	var b strings.Builder
	b.WriteString("ccm:\n  resources:\n    - file:\n")
	for j := range files {
		fmt.Fprintf(&b, "        - \"{{ Data.node_dir }}/f%d.conf\": {content: \"%s file %d\\n\", owner: root, group: root, mode: \"0644\"}\n", j, version, j)
	}
	return pack(dir, b.String())
}

func pack(dir, manifest string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.yaml"), []byte(manifest), 0o644); err != nil {
		return nil, err
	}
	return bundle.Pack(dir)
}

// BadManifestBundle packs a bundle whose manifest does not load (a file
// resource with a property the file type does not have), so no resource
// of it runs.
func BadManifestBundle(dir string) ([]byte, error) {
	return pack(dir, "ccm:\n  resources:\n    - file:\n        - \"{{ Data.node_dir }}/f0.conf\": {content: \"bad\", owner: root, group: root, mode: \"0644\", no_such_property: 1}\n")
}

// Publish puts archive and its signature into the fleet's bucket, the
// signature first: the agents wake when the bundle's object is replaced,
// so its signature must already be there (docs/performance.md).
func Publish(ctx context.Context, js jetstream.JetStream, archive, sig []byte) error {
	obs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: Bucket, Storage: jetstream.FileStorage})
	if err != nil {
		return err
	}
	if sig != nil {
		if _, err := obs.PutBytes(ctx, Key+bundle.SigSuffix, sig); err != nil {
			return err
		}
	}
	_, err = obs.PutBytes(ctx, Key, archive)
	return err
}

// HashDir is a digest of every path, mode and content under dir.
func HashDir(dir string) (string, error) {
	h := newHasher()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v\n", strings.TrimPrefix(p, dir), fi.Mode())
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(h, f); err != nil {
				return err
			}
		}
		return nil
	})
	return h.sum(), err
}

type hasher struct{ hash.Hash }

func newHasher() hasher { return hasher{sha256.New()} }

func (h hasher) sum() string { return hex.EncodeToString(h.Sum(nil)) }
