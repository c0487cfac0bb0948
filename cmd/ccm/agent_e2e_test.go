package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/agent"
	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/nats-io/nats.go/jetstream"
)

// nextResult waits for the next result of node on the results stream.
func nextResult(t *testing.T, c jetstream.Consumer) agent.Result {
	t.Helper()
	msg, err := c.Next(jetstream.FetchMaxWait(20 * time.Second))
	if err != nil {
		t.Fatalf("waiting for an agent result: %v", err)
	}
	var r agent.Result
	if err := json.Unmarshal(msg.Data(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func resultsOf(t *testing.T, js jetstream.JetStream, node string) jetstream.Consumer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if err := agent.EnsureStream(ctx, js); err != nil {
		t.Fatal(err)
	}
	c, err := js.OrderedConsumer(ctx, agent.ResultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{agent.ResultSubject(node)}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// agentProc is a running ccm agent whose stderr the test reads.
type agentProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	exited chan error
}

// startAgent starts ccm with args in work (killed at the end of the test
// if still running).
func startAgent(t *testing.T, work string, env []string, args ...string) *agentProc {
	t.Helper()
	p := &agentProc{t: t, cmd: ccmtest.Command(t, work, env, args...), exited: make(chan error, 1)}
	p.cmd.Stderr = writerFunc(func(b []byte) (int, error) { p.mu.Lock(); defer p.mu.Unlock(); return p.stderr.Write(b) })
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *agentProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *agentProc) logged(s string) func() bool {
	return func() bool { return strings.Contains(p.logs(), s) }
}

// waitFor waits up to 20s for ok, failing with what and the agent's log.
func (p *agentProc) waitFor(what string, ok func() bool) {
	p.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			p.t.Fatalf("%s\n%s", what, p.logs())
		}
	}
}

// stop sends SIGTERM and returns the exit code; the agent must be gone
// within wait.
func (p *agentProc) stop(wait time.Duration) int {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(wait):
		p.t.Fatalf("agent still running %s after SIGTERM\n%s", wait, p.logs())
	}
	return p.cmd.ProcessState.ExitCode()
}

// TestAgentConvergesAndFollowsTheBundle is the walk-through of
// docs/agent.md: an agent confined to OUT applies an obj:// bundle and a
// local manifest, publishes both results, re-applies as soon as a new
// bundle is published, and stops on SIGTERM.
func TestAgentConvergesAndFollowsTheBundle(t *testing.T) {
	env, js, _ := remoteEnv(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	src := vendorBundle(t, out, "v1")
	ccmOK(t, work, env, "bundle", "pack", src, "--out", "site.tar.gz")
	ccmOK(t, work, env, "bundle", "publish", "site.tar.gz", "obj://SITE/site.tar.gz")
	writeManifest(t, work, "local.yaml", `
ccm:
  resources:
    - file:
        - `+out+`/local: {content: "local", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	os.WriteFile(filepath.Join(work, "grants.yaml"), []byte(`
fs_read: ["`+work+`/**"]
fs_write: ["`+out+`/**"]
net: ["nats:obj/SITE"]
users: true
`), 0o644)
	os.WriteFile(filepath.Join(work, "agent.yaml"), []byte(`
interval: 1h
manifests:
  - obj://SITE/site.tar.gz
  - `+work+`/local.yaml
cache_dir: `+filepath.Join(work, "cache")+`
nats_context: CCM
grants: `+filepath.Join(work, "grants.yaml")+`
node: web1
`), 0o644)
	results := resultsOf(t, js, "web1")

	ag := startAgent(t, work, env, "agent", "--config", "agent.yaml")

	for i, want := range []string{"obj://SITE/site.tar.gz", work + "/local.yaml"} {
		r := nextResult(t, results)
		if r.Manifest != want || r.Reason != "start" || !r.Successful || r.Node != "web1" || r.Summary == nil || r.Summary.Failed != 0 {
			t.Fatalf("result %d: %+v\n%s", i, r, ag.logs())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "vendor")); string(b) != "v1" {
		t.Fatalf("vendor file %q after the first run", b)
	}

	// A new bundle: the agent hears of it and converges, without waiting for the hour.
	src2 := vendorBundle(t, out, "v2")
	ccmOK(t, work, env, "bundle", "pack", src2, "--out", "site2.tar.gz")
	ccmOK(t, work, env, "bundle", "publish", "site2.tar.gz", "obj://SITE/site.tar.gz")
	r := nextResult(t, results)
	if r.Manifest != "obj://SITE/site.tar.gz" || r.Reason != "changed: obj://SITE/site.tar.gz" || !r.Successful || r.Summary.Changed == 0 {
		t.Fatalf("after the new bundle: %+v\n%s", r, ag.logs())
	}
	a2, _ := os.ReadFile(filepath.Join(work, "site2.tar.gz"))
	if r.Digest != bundle.Digest(a2) {
		t.Fatalf("result names bundle %q, want %s", r.Digest, bundle.Digest(a2))
	}
	if b, _ := os.ReadFile(filepath.Join(out, "vendor")); string(b) != "v2" {
		t.Fatalf("vendor file %q after the new bundle", b)
	}
	nextResult(t, results) // the local manifest, run with it

	// A bad bundle (its manifest does not load): reported as an error, nothing changed.
	bad := t.TempDir()
	writeManifest(t, bad, "manifest.yaml", "ccm:\n  resources:\n    - file: [\n")
	ccmOK(t, work, env, "bundle", "pack", bad, "--out", "bad.tar.gz")
	ccmOK(t, work, env, "bundle", "publish", "bad.tar.gz", "obj://SITE/site.tar.gz")
	r = nextResult(t, results)
	if r.Successful || r.Error == "" || r.Summary != nil || r.Reason != "changed: obj://SITE/site.tar.gz" {
		t.Fatalf("bad bundle: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "vendor")); string(b) != "v2" {
		t.Fatalf("vendor file %q after the bad bundle", b)
	}
	nextResult(t, results)

	if code := ag.stop(10 * time.Second); code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %d after SIGTERM, want %d\n%s", code, 128+int(syscall.SIGTERM), ag.logs())
	}
}

// TestAgentOnceReportsRefusal: a manifest that writes outside the node's
// grants fails, changes nothing, and the failure is published with the
// resource and the reason; --once exits 1.
func TestAgentOnceReportsRefusal(t *testing.T) {
	env, js, _ := remoteEnv(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	outside := filepath.Join(work, "outside")
	writeManifest(t, work, "m.yaml", `
ccm:
  resources:
    - file:
        - `+outside+`: {content: "no", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	os.WriteFile(filepath.Join(work, "grants.yaml"), []byte("fs_read: [\""+work+"/**\"]\nfs_write: [\""+out+"/**\"]\nusers: true\n"), 0o644)
	os.WriteFile(filepath.Join(work, "agent.yaml"), []byte("manifests: [m.yaml]\ncache_dir: "+filepath.Join(work, "cache")+"\ngrants: grants.yaml\n"), 0o644)
	results := resultsOf(t, js, "db1")
	res := ccmtest.Run(t, work, env, "agent", "--config", "agent.yaml", "--once", "--node", "db1")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the file outside the grants was written")
	}
	r := nextResult(t, results)
	if r.Successful || r.Reason != "once" || r.Summary == nil || r.Summary.Failed != 1 || len(r.Failed) != 1 ||
		r.Failed[0].Resource != "file#"+outside || !strings.Contains(strings.Join(r.Failed[0].Messages, " "), "fs_write") {
		t.Fatalf("published %+v", r)
	}

	// CCM's own example configuration is accepted as is (a bad key is not).
	os.WriteFile(filepath.Join(work, "bad.yaml"), []byte("manifests: [m.yaml]\nintervall: 1m\n"), 0o644)
	bad := ccmtest.Run(t, work, env, "agent", "--config", "bad.yaml", "--once")
	if bad.Code != 2 || !strings.Contains(bad.Stderr, "intervall") || !strings.Contains(bad.Stderr, "bad.yaml") {
		t.Fatalf("misspelt key: exit %d\n%s", bad.Code, bad.Stderr)
	}
}

// TestAgentWithoutServer: with its NATS server down, the agent still
// converges its local manifest (publishing is logged as failed) and stops on
// SIGTERM.
func TestAgentWithoutServer(t *testing.T) {
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "nats", "context"), 0o755)
	os.WriteFile(filepath.Join(cfg, "nats", "context", "CCM.json"), []byte(`{"url":"nats://127.0.0.1:1"}`), 0o600)
	env := []string{"XDG_CONFIG_HOME=" + cfg}
	work := t.TempDir()
	writeManifest(t, work, "m.yaml", `
ccm:
  resources:
    - file:
        - @DIR@/done: {content: "yes", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	os.WriteFile(filepath.Join(work, "agent.yaml"), []byte("interval: 1h\nmanifests: [m.yaml, obj://SITE/x.tar.gz]\ncache_dir: "+filepath.Join(work, "cache")+"\nnode: n1\n"), 0o644)
	ag := startAgent(t, work, env, "agent", "--config", "agent.yaml")
	ag.waitFor("the local manifest was not applied with NATS down", func() bool {
		b, _ := os.ReadFile(filepath.Join(work, "done"))
		return string(b) == "yes"
	})
	ag.stop(15 * time.Second)
}

// TestFleetStatus: two agents report; ccm fleet status shows one row per
// node with its state, and exits 1 because one of them failed.
func TestFleetStatus(t *testing.T) {
	env, _, _ := remoteEnv(t)
	work := t.TempDir()
	writeManifest(t, work, "ok.yaml", `
ccm:
  resources:
    - file:
        - @DIR@/ok: {content: "ok", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	os.WriteFile(filepath.Join(work, "agent.yaml"), []byte("manifests: [ok.yaml]\ncache_dir: "+filepath.Join(work, "cache")+"\n"), 0o644)
	os.WriteFile(filepath.Join(work, "broken.yaml"), []byte("manifests: [missing.yaml]\ncache_dir: "+filepath.Join(work, "cache")+"\n"), 0o644)
	ccmOK(t, work, env, "agent", "--config", "agent.yaml", "--once", "--node", "web1")
	if res := ccmtest.Run(t, work, env, "agent", "--config", "broken.yaml", "--once", "--node", "web2"); res.Code != 1 {
		t.Fatalf("broken agent: exit %d\n%s", res.Code, res.Stderr)
	}
	res := ccmtest.Run(t, work, env, "fleet", "status")
	if res.Code != 1 {
		t.Fatalf("fleet status: exit %d, want 1 (a node failed)\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NODE") ||
		!strings.HasPrefix(lines[1], "web1") || !strings.Contains(lines[1], " ok ") ||
		!strings.HasPrefix(lines[2], "web2") || !strings.Contains(lines[2], " error ") {
		t.Fatalf("fleet status:\n%s", res.Stdout)
	}
	if res := ccmtest.Run(t, work, env, "fleet", "status", "--stale", "1ns"); !strings.Contains(res.Stdout, "ok,stale") {
		t.Fatalf("--stale 1ns:\n%s", res.Stdout)
	}

	// fleet watch prints results as they come.
	cmd := ccmtest.Command(t, work, env, "fleet", "watch")
	var stdout strings.Builder
	var mu sync.Mutex
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return stdout.Write(p) })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		// Publish until the watcher, subscribing asynchronously, has seen one.
		ccmOK(t, work, env, "agent", "--config", "agent.yaml", "--once", "--node", "web3")
		mu.Lock()
		got := stdout.String()
		mu.Unlock()
		if strings.Contains(got, " web3 ok.yaml (once): 0 changed, 0 failed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fleet watch printed %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestAgentReloadsOnSIGHUP: SIGHUP re-reads the configuration and the new
// manifests run at once; a broken configuration is refused and the running
// one kept.
func TestAgentReloadsOnSIGHUP(t *testing.T) {
	work := t.TempDir()
	for _, n := range []string{"a", "b"} {
		writeManifest(t, work, n+".yaml", `
ccm:
  resources:
    - file:
        - @DIR@/`+n+`:
            content: "`+n+`"
            owner: "@USER@"
            group: "@GROUP@"
            mode: "0644"
            health_checks:
              - {name: alive, command: "sh -c 'sleep 0.01'"}
`)
	}
	conf := filepath.Join(work, "agent.yaml")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	os.WriteFile(conf, []byte(fmt.Sprintf("interval: 1h\nmanifests: [a.yaml]\ncache_dir: %s\nmonitor_port: %d\n", filepath.Join(work, "cache"), port)), 0o644)
	ag := startAgent(t, work, nil, "agent", "--config", "agent.yaml", "--no-nats", "--node", "h")
	waitFor, logged := ag.waitFor, ag.logged
	exists := func(n string) func() bool {
		return func() bool { _, err := os.Stat(filepath.Join(work, n)); return err == nil }
	}
	waitFor("a was not applied", exists("a"))
	waitFor("first run not finished", logged("run of a.yaml: 1 resources"))

	// Prometheus metrics: the apply duration is the run's, not ~0; CCM's
	// per-resource metrics with its labels, one gathering of facts.
	scrape := func() string {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	var body string
	waitFor("no metrics of the first run", func() bool {
		body = scrape()
		return metricValue(body, "choria_ccm_resource_state_total_count", `name="`+work+`/a"`) == 1
	})
	a := `name="` + work + `/a"`
	for _, m := range []struct {
		name, label string
		want        float64
	}{
		{"choria_ccm_agent_runs_count", `manifest="a.yaml",outcome="ok"`, 1},
		{"choria_ccm_resource_state_changed_count", a, 1},
		{"choria_ccm_resource_state_stable_count", a, -1}, // absent
		{"choria_ccm_resource_apply_duration_seconds_count", a, 1},
		{"choria_ccm_manifest_apply_duration_seconds_count", `source="a.yaml"`, 1},
		{"choria_ccm_facts_gather_duration_seconds_count", "", 1},
		{"choria_ccm_healthcheck_status_count", `check="alive",` + a + `,status="OK",type="file"`, 1},
		{"choria_ccm_healthcheck_duration_seconds_count", `check="alive",` + a + `,type="file"`, 1},
		{"choria_ccm_agent_facts_resolve_duration_seconds_count", "", 1},
	} {
		if got := metricValue(body, m.name, m.label); got != m.want {
			t.Errorf("%s{%s} = %v, want %v", m.name, m.label, got, m.want)
		}
	}
	if !strings.Contains(body, `choria_ccm_resource_apply_duration_seconds_count{`+a+`,provider="`) || !strings.Contains(body, `type="file"}`) {
		t.Errorf("resource labels are not CCM's (type, provider, name):\n%s", body)
	}
	// Durations are the real ones: the run took longer than its one resource, both more than nothing.
	run, res := metricValue(body, "choria_ccm_agent_apply_duration_seconds_sum", `manifest="a.yaml"`), metricValue(body, "choria_ccm_resource_apply_duration_seconds_sum", a)
	check := metricValue(body, "choria_ccm_healthcheck_duration_seconds_sum", `check="alive",`+a)
	if run <= 0.0001 || res <= 0 || res > run || check < 0.01 || check > run {
		t.Fatalf("apply duration sum %v, resource %v, health check %v:\n%s", run, res, check, body)
	}

	os.WriteFile(conf, []byte("manifests: [b.yaml]\nintervall: 1h\n"), 0o644)
	ag.cmd.Process.Signal(syscall.SIGHUP)
	waitFor("broken configuration not reported", logged("keeping the running configuration"))

	os.WriteFile(conf, []byte("interval: 1h\nmanifests: [b.yaml]\ncache_dir: "+filepath.Join(work, "cache")+"\n"), 0o644)
	ag.cmd.Process.Signal(syscall.SIGHUP)
	waitFor("b was not applied after SIGHUP", exists("b"))
	// Facts are younger than facts_interval (default 2m): not gathered again.
	waitFor("no metrics of b's run", func() bool {
		body = scrape()
		return metricValue(body, "choria_ccm_resource_state_changed_count", `name="`+work+`/b"`) == 1
	})
	if n := metricValue(body, "choria_ccm_facts_gather_duration_seconds_count", ""); n != 1 {
		t.Fatalf("facts gathered %v times, want once within facts_interval", n)
	}
}

// metricValue is the value of the sample of name whose labels contain
// label ("" for a sample without labels), -1 when there is none.
func metricValue(body, name, label string) float64 {
	for _, l := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(l, name)
		if !ok {
			continue
		}
		if label == "" && strings.HasPrefix(rest, " ") {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
		if label != "" && strings.HasPrefix(rest, "{") && strings.Contains(rest[:strings.Index(rest, "}")+1], label) {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest[strings.Index(rest, "}")+1:]), 64)
			return v
		}
	}
	return -1
}
