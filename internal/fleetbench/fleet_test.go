package fleetbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/agent"
	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

// proc is a child process of the fleet.
type proc struct {
	cmd  *exec.Cmd
	done chan error
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop signals the process and waits for it; after SIGTERM it must exit
// 0 (a race the detector found in it makes it exit 66).
func (p *proc) stop(t *testing.T, sig syscall.Signal, log string) {
	_ = p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		if sig == syscall.SIGTERM && err != nil {
			b, _ := os.ReadFile(log)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Errorf("%s: %v; the end of its log:\n%s", filepath.Base(log), err, b)
		}
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("process %d did not stop on %v", p.pid(), sig)
	}
}

// start re-executes the test binary in a role; it returns once the child
// printed want on its standard output.
func start(t *testing.T, env []string, logFile, want string) *proc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = lf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		seen := false
		for sc.Scan() {
			if !seen && strings.HasPrefix(sc.Text(), want) {
				seen = true
				close(ready)
			}
		}
		p.done <- cmd.Wait()
		lf.Close()
	}()
	select {
	case <-ready:
	case <-p.done:
		b, _ := os.ReadFile(logFile)
		t.Fatalf("%v exited before it was ready: %s", env[0], b)
	case <-time.After(2 * time.Minute):
		t.Fatalf("%v not ready after 2m", env[0])
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	return p
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// arrival is one result the coordinator heard, and when.
type arrival struct {
	r  agent.Result
	at time.Time
}

// tracker keeps every result published on the results subjects.
type tracker struct {
	mu   sync.Mutex
	seen map[string][]arrival
}

func (k *tracker) add(m *nats.Msg) {
	var r agent.Result
	if json.Unmarshal(m.Data, &r) != nil {
		return
	}
	k.mu.Lock()
	k.seen[r.Node] = append(k.seen[r.Node], arrival{r, time.Now()})
	k.mu.Unlock()
}

// sweep adds every node's last stored result, unless already heard.
func (k *tracker) sweep(ctx context.Context, js jetstream.JetStream) {
	rows, err := agent.Latest(ctx, js)
	if err != nil {
		return
	}
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, r := range rows {
		if !slices.ContainsFunc(k.seen[r.Node], func(a arrival) bool { return a.r.Started.Equal(r.Started) }) {
			k.seen[r.Node] = append(k.seen[r.Node], arrival{r, now})
		}
	}
}

// phase is what waitAll measured.
type phase struct {
	P50, P90, Max time.Duration
	Done          int
}

// waitAll waits until every node has published a result of a run started
// after t0 for which ok holds, and returns the spread of their arrivals.
func (k *tracker) waitAll(t *testing.T, nodes int, t0 time.Time, timeout time.Duration, ok func(agent.Result) bool) phase {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var times []time.Duration
		k.mu.Lock()
		for i := range nodes {
			for _, a := range k.seen[NodeName(i)] {
				if !a.r.Started.Before(t0) && ok(a.r) {
					times = append(times, a.at.Sub(t0))
					break
				}
			}
		}
		k.mu.Unlock()
		if len(times) == nodes {
			slices.Sort(times)
			return phase{P50: times[nodes/2], P90: times[nodes*9/10], Max: times[nodes-1], Done: nodes}
		}
		if time.Now().After(deadline) {
			var missing []string
			k.mu.Lock()
			for i := range nodes {
				seen := k.seen[NodeName(i)]
				if len(missing) < 5 && !slices.ContainsFunc(seen, func(a arrival) bool { return !a.r.Started.Before(t0) && ok(a.r) }) {
					last := "nothing"
					if len(seen) > 0 {
						r := seen[len(seen)-1].r
						last = fmt.Sprintf("%s (%s) digest %.12s error %q", r.Started.Format(time.StampMilli), r.Reason, r.Digest, r.Error)
					}
					missing = append(missing, NodeName(i)+": last heard "+last)
				}
			}
			k.mu.Unlock()
			t.Fatalf("after %v only %d of %d nodes reported; among those missing:\n%s", timeout, len(times), nodes, strings.Join(missing, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// count is how many nodes have such a result so far.
func (k *tracker) count(nodes int, t0 time.Time, ok func(agent.Result) bool) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	c := 0
	for i := range nodes {
		for _, a := range k.seen[NodeName(i)] {
			if !a.r.Started.Before(t0) && ok(a.r) {
				c++
				break
			}
		}
	}
	return c
}

type varz struct {
	Connections   int     `json:"connections"`
	Subscriptions int     `json:"subscriptions"`
	CPU           float64 `json:"cpu"`
	Mem           int64   `json:"mem"`
	InMsgs        int64   `json:"in_msgs"`
	OutMsgs       int64   `json:"out_msgs"`
	SlowConsumers int64   `json:"slow_consumers"`
}

type jsz struct {
	Streams   int `json:"streams"`
	Consumers int `json:"consumers"`
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestFleet runs CCM_FLEET_AGENTS agents (default 20, a few seconds) in
// CCM_FLEET_PROCS agent hosts against one nats-server process, and
// measures: the first convergence, a rollout of a new signed bundle, a
// rollout during which the server is killed and restarted, and two bad
// bundles (an untrusted signature, a manifest that does not load) that
// every node must report as failed with nothing changed on disk.
//
//	CCM_FLEET_AGENTS=1000 go test -run TestFleet -v -timeout 30m ./internal/fleetbench/
func TestFleet(t *testing.T) {
	n := 20
	if v := os.Getenv("CCM_FLEET_AGENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			t.Fatalf("CCM_FLEET_AGENTS=%q: want a positive number", v)
		}
	}
	procs := envInt("CCM_FLEET_PROCS", min(4, max(1, n/10)))
	parallel := envInt("CCM_FLEET_PARALLEL", 2)
	files := envInt("CCM_FLEET_FILES", 5)
	timeout := time.Duration(60+n/4) * time.Second // generous: 2 cores, shared

	root := t.TempDir()
	if d := os.Getenv("CCM_FLEET_DIR"); d != "" { // kept, with the logs
		root = d
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	seed, pub, err := bundle.Keygen()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "trusted.keys"), []byte(pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.MkdirAll(OutDir(root, i), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// The server, in its own process so that its CPU and memory are its own.
	port, mport := freePort(t), freePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	store := filepath.Join(root, "js")
	serverEnv := []string{Role + "=server", "FB_PORT=" + strconv.Itoa(port), "FB_STORE=" + store, "FB_HTTP_PORT=" + strconv.Itoa(mport)}
	srv := start(t, serverEnv, filepath.Join(root, "server.log"), "ready")
	monitor := fmt.Sprintf("http://127.0.0.1:%d", mport)
	if err := os.WriteFile(filepath.Join(root, "nats.json"), fmt.Appendf(nil, `{"url":%q}`, url), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	trk := &tracker{seen: map[string][]arrival{}}
	// Results stored while this connection was away are read back from
	// the stream once it is back (the subscription is resent by then).
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
		nats.ReconnectHandler(func(c *nats.Conn) {
			go func() {
				if js, err := jetstream.New(c); err == nil && c.Flush() == nil {
					trk.sweep(ctx, js)
				}
			}()
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Subscribe(agent.ResultPrefix+">", trk.add); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	signed := func(version string, key []byte) ([]byte, []byte, string) {
		archive, err := Bundle(filepath.Join(root, "src-"+version), version, files)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := bundle.Sign(archive, key)
		if err != nil {
			t.Fatal(err)
		}
		return archive, sig, bundle.Digest(archive)
	}
	publish := func(archive, sig []byte) time.Time {
		t0 := time.Now()
		if err := Publish(ctx, js, archive, sig); err != nil {
			t.Fatal(err)
		}
		return t0
	}
	converged := func(digest string) func(agent.Result) bool {
		return func(r agent.Result) bool { return r.Successful && r.Digest == digest && r.Error == "" }
	}
	checkFiles := func(version string) {
		t.Helper()
		for i := range n {
			for j := range files {
				b, err := os.ReadFile(filepath.Join(OutDir(root, i), fmt.Sprintf("f%d.conf", j)))
				if want := fmt.Sprintf("%s file %d\n", version, j); err != nil || string(b) != want {
					t.Fatalf("%s: f%d.conf is %q (%v), want %q", NodeName(i), j, b, err, want)
				}
			}
		}
	}
	// stored checks that every node's last result in CCM_RESULTS holds.
	stored := func(what string, ok func(agent.Result) bool) {
		t.Helper()
		rows, err := agent.Latest(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		good := 0
		for _, r := range rows {
			if ok(r) {
				good++
			}
		}
		if good != n || len(rows) != n {
			t.Fatalf("%s: %d of %d nodes' last stored results hold (%d rows)", what, good, n, len(rows))
		}
	}

	a1, s1, d1 := signed("v1", seed)
	publish(a1, s1)

	// The agent hosts, with the compilation cache the other tests share
	// (not the system's).
	var hosts []*proc
	cacheEnv := "CCM_CACHE_DIR=" + filepath.Join(os.TempDir(), "ccmtest-cache")
	if d := os.Getenv("CCM_CACHE_DIR"); d != "" {
		cacheEnv = "CCM_CACHE_DIR=" + d
	}
	per := (n + procs - 1) / procs
	tStart := time.Now()
	for k := range procs {
		first := k * per
		count := min(per, n-first)
		if count <= 0 {
			break
		}
		hosts = append(hosts, start(t, []string{Role + "=agents", "FB_ROOT=" + root, "FB_URL=" + url,
			"FB_FIRST=" + strconv.Itoa(first), "FB_COUNT=" + strconv.Itoa(count), "FB_PROC=" + strconv.Itoa(k),
			"FB_PARALLEL=" + strconv.Itoa(parallel), cacheEnv}, filepath.Join(root, fmt.Sprintf("agents-%d.log", k)), "started"))
	}
	first := trk.waitAll(t, n, tStart, timeout, converged(d1))
	checkFiles("v1")
	t.Logf("%d agents in %d processes (%d applies at once in each), bundle of %d files: all converged and reported %v after the processes started (p50 %v)",
		n, len(hosts), parallel, files, first.Max.Round(time.Millisecond), first.P50.Round(time.Millisecond))

	procStats := func() (agents Stats) {
		for k := range hosts {
			msg, err := nc.Request(StatsSubject(k), nil, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var s Stats
			if err := json.Unmarshal(msg.Data, &s); err != nil {
				t.Fatal(err)
			}
			agents.Agents += s.Agents
			agents.HeapAlloc += s.HeapAlloc
			agents.HeapInuse += s.HeapInuse
			agents.Sys += s.Sys
			agents.RSS += s.RSS
			agents.HWM = max(agents.HWM, s.HWM)
			agents.Goroutines += s.Goroutines
			agents.Runs += s.Runs
			agents.Running += s.Running
		}
		return agents
	}
	// settle waits until no agent is running: a run still going on when
	// the next bundle is published would be measured with it (and one
	// reading the object being replaced waits out its fetch timeout).
	settle := func() {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for quiet := 0; quiet < 3; {
			if procStats().Running == 0 {
				quiet++
			} else {
				quiet = 0
			}
			if time.Now().After(deadline) {
				t.Fatalf("agents still running %v after the phase", timeout)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	cpu := func() (server, agents time.Duration) {
		for _, h := range hosts {
			agents += CPUTime(h.pid())
		}
		return CPUTime(srv.pid()), agents
	}
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(b))[:3], " ")
	}
	mib := func(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	kib := func(b uint64) string { return fmt.Sprintf("%.0f KiB", float64(b)/1024) }

	// Steady state: memory per agent, server memory, consumers.
	st := procStats()
	srvRSS, _ := ProcStatus(srv.pid())
	var vz varz
	var jz jsz
	getJSON(t, monitor+"/varz", &vz)
	getJSON(t, monitor+"/jsz", &jz)
	t.Logf("steady: agent hosts RSS %s in all (%s per agent), Go heap in use %s (%s per agent), %d goroutines; server RSS %s, %d connections, %d subscriptions, %d streams, %d consumers; load %s",
		mib(st.RSS), kib(st.RSS/uint64(n)), mib(st.HeapInuse), kib(st.HeapInuse/uint64(n)), st.Goroutines,
		mib(srvRSS), vz.Connections, vz.Subscriptions, jz.Streams, jz.Consumers, load())
	if jz.Consumers != 0 {
		t.Errorf("%d JetStream consumers: the agents must not make any", jz.Consumers)
	}

	// 1. A rollout.
	settle()
	a2, s2, d2 := signed("v2", seed)
	sc0, ac0 := cpu()
	runs0 := st.Runs
	t0 := publish(a2, s2)
	roll := trk.waitAll(t, n, t0, timeout, converged(d2))
	sc1, ac1 := cpu()
	checkFiles("v2")
	stored("rollout", converged(d2))
	st = procStats()
	srvRSS, srvHWM := ProcStatus(srv.pid())
	t.Logf("rollout: all %d converged and reported %v after the publish (p50 %v, p90 %v); %d runs; CPU: server %v, agent hosts %v (%v per apply); server RSS %s (peak %s); agent hosts RSS %s (peak of one %s); load %s",
		n, roll.Max.Round(time.Millisecond), roll.P50.Round(time.Millisecond), roll.P90.Round(time.Millisecond), st.Runs-runs0,
		(sc1 - sc0).Round(time.Millisecond), (ac1 - ac0).Round(time.Millisecond), ((ac1 - ac0) / time.Duration(max(1, st.Runs-runs0))).Round(time.Microsecond),
		mib(srvRSS), mib(srvHWM), mib(st.RSS), mib(st.HWM), load())

	// 2. The server is killed mid-rollout and started again on its store.
	settle()
	a3, s3, d3 := signed("v3", seed)
	runs0 = procStats().Runs
	t0 = publish(a3, s3)
	for trk.count(n, t0, converged(d3)) < max(1, n/4) {
		if time.Since(t0) > timeout {
			t.Fatal("no node converged on v3")
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := trk.count(n, t0, converged(d3))
	srv.stop(t, syscall.SIGKILL, "")
	tDown := time.Now()
	srv = start(t, serverEnv, filepath.Join(root, "server.log"), "ready")
	down := time.Since(tDown)
	restart := trk.waitAll(t, n, t0, timeout, converged(d3))
	checkFiles("v3")
	stored("restart", converged(d3))
	t.Logf("server restart: killed when %d of %d had reported, back after %v; all converged and reported %v after the publish (p50 %v), %d runs; load %s",
		before, n, down.Round(time.Millisecond), restart.Max.Round(time.Millisecond), restart.P50.Round(time.Millisecond), procStats().Runs-runs0, load())

	// 3. Bad bundles: nothing may change on any node.
	settle()
	hashes := make([]string, n)
	for i := range n {
		if hashes[i], err = HashDir(OutDir(root, i)); err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(what string) {
		t.Helper()
		for i := range n {
			h, err := HashDir(OutDir(root, i))
			if err != nil {
				t.Fatal(err)
			}
			if h != hashes[i] {
				t.Fatalf("%s: %s's directory changed", what, NodeName(i))
			}
		}
	}
	otherSeed, _, err := bundle.Keygen()
	if err != nil {
		t.Fatal(err)
	}
	a4, s4, _ := signed("v4", otherSeed)
	t0 = publish(a4, s4)
	badSig := func(r agent.Result) bool {
		return !r.Successful && strings.Contains(r.Error, "sign") && r.Digest == ""
	}
	bad := trk.waitAll(t, n, t0, timeout, badSig)
	unchanged("untrusted signature")
	stored("untrusted signature", badSig)
	var example agent.Result
	trk.mu.Lock()
	example = trk.seen[NodeName(0)][len(trk.seen[NodeName(0)])-1].r
	trk.mu.Unlock()
	t.Logf("bundle signed by an untrusted key: all %d reported failure %v after the publish (p50 %v), nothing changed; node0000: %s",
		n, bad.Max.Round(time.Millisecond), bad.P50.Round(time.Millisecond), example.Error)

	bm, err := BadManifestBundle(filepath.Join(root, "src-bad"))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := bundle.Sign(bm, seed)
	if err != nil {
		t.Fatal(err)
	}
	settle()
	t0 = publish(bm, bs)
	badManifest := func(r agent.Result) bool { return !r.Successful && r.Digest == bundle.Digest(bm) }
	bad = trk.waitAll(t, n, t0, timeout, badManifest)
	unchanged("bad manifest")
	stored("bad manifest", badManifest)
	trk.mu.Lock()
	example = trk.seen[NodeName(0)][len(trk.seen[NodeName(0)])-1].r
	trk.mu.Unlock()
	t.Logf("bundle whose manifest does not load: all %d reported failure %v after the publish (p50 %v), nothing changed; node0000: %s",
		n, bad.Max.Round(time.Millisecond), bad.P50.Round(time.Millisecond), example.Error)

	for k, h := range hosts {
		h.stop(t, syscall.SIGTERM, filepath.Join(root, fmt.Sprintf("agents-%d.log", k)))
	}
	srv.stop(t, syscall.SIGTERM, filepath.Join(root, "server.log"))
}
