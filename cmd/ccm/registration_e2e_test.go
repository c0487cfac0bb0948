package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/registration"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// streamInfo is the registration stream's configuration.
func streamInfo(t *testing.T, js jetstream.JetStream) jetstream.StreamConfig {
	t.Helper()
	s, err := js.Stream(context.Background(), registration.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.Config
}

// watchLines starts `ccm registration watch --json` and returns its
// output lines as they come.
func watchLines(t *testing.T, dir string, env []string, args ...string) <-chan string {
	t.Helper()
	cmd := ccmtest.Command(t, dir, env, append([]string{"registration", "watch", "--json"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines
}

func nextLine(t *testing.T, lines <-chan string) registration.Event {
	t.Helper()
	select {
	case l := <-lines:
		var ev registration.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("watch printed %q: %v", l, err)
		}
		return ev
	case <-time.After(15 * time.Second):
		t.Fatal("no watch event within 15s")
	}
	return registration.Event{}
}

// TestRegistrationCLI is docs/registration.md's walk-through: init (with
// AllowDirect), create with annotations (-A panics in CCM), query in
// every format, a Prometheus file_sd file, watch seeing a registration
// and its TTL expiry, rm.
func TestRegistrationCLI(t *testing.T) {
	env, js, _ := remoteEnv(t)
	dir := t.TempDir()
	out := ccmOK(t, dir, env, "registration", "init", "--max-age", "1m")
	if !strings.Contains(out, "Registration stream ready stream=REGISTRATION") || !streamInfo(t, js).AllowDirect {
		t.Fatalf("init: %s", out)
	}
	lines := watchLines(t, dir, env, "prod")
	out = ccmOK(t, dir, env, "registration", "create", "--cluster", "prod", "--service", "web", "--protocol", "http",
		"--address", "10.0.0.5", "--port", "8080", "--priority", "10", "--ttl", "5m", "-A", "prometheus.io/scrape=true", "-A", "team=a")
	if !strings.Contains(out, "Registration entry created cluster=prod service=web protocol=http address=10.0.0.5 port=8080 priority=10") {
		t.Fatal(out)
	}
	ccmOK(t, dir, env, "registration", "c", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "10.0.0.4", "--port", "8080", "--ttl", "1s")
	ccmOK(t, dir, env, "reg", "create", "--cluster", "dev", "--service", "db", "--protocol", "pg", "--address", "10.0.0.9", "--port", "5432")

	if ev := nextLine(t, lines); ev.Action != "register" || ev.Entry.Address != "10.0.0.5" || ev.Entry.Annotations["team"] != "a" || ev.Entry.TTL != "5m0s" {
		t.Fatalf("%+v", ev)
	}
	if ev := nextLine(t, lines); ev.Action != "register" || ev.Entry.Address != "10.0.0.4" {
		t.Fatalf("%+v", ev)
	}

	var got []map[string]any
	if err := json.Unmarshal([]byte(ccmOK(t, dir, env, "registration", "query", "prod", "http", "web", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["address"] != "10.0.0.4" || got[1]["ttl"] != "5m0s" || got[1]["port"] != float64(8080) {
		t.Fatalf("%v", got)
	}
	text := ccmOK(t, dir, env, "registration", "query")
	for _, want := range []string{"Service: db @ dev", "Service: web @ prod", "       Address: 10.0.0.5\n          Port: 8080\n      Priority: 10\n   Annotations:\n                prometheus.io/scrape: true\n                team: a\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("query output lacks %q:\n%s", want, text)
		}
	}
	if y := ccmOK(t, dir, env, "registration", "q", "dev", "--yaml"); !strings.Contains(y, "- cluster: dev\n  service: db\n") {
		t.Fatal(y)
	}
	sd := filepath.Join(dir, "sd", "ccm.json")
	os.MkdirAll(filepath.Dir(sd), 0o755)
	ccmOK(t, dir, env, "registration", "query", "prod", "--prometheus-sd", sd)
	b, _ := os.ReadFile(sd)
	var groups []struct {
		Labels  map[string]string `json:"labels"`
		Targets []string          `json:"targets"`
	}
	if err := json.Unmarshal(b, &groups); err != nil || len(groups) != 1 || strings.Join(groups[0].Targets, ",") != "10.0.0.5:8080" || groups[0].Labels["team"] != "a" || groups[0].Labels["cluster"] != "prod" {
		t.Fatalf("%s %v", b, err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(sd)); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}

	// The 1s entry expires: the watch reports its removal.
	if ev := nextLine(t, lines); ev.Action != "remove" || ev.Reason != "MaxAge" || ev.Entry.Address != "10.0.0.4" {
		t.Fatalf("%+v", ev)
	}

	res := ccmtest.Run(t, dir, env, "registration", "rm", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "10.0.0.5", "--port", "8080")
	if res.Code != exitUsage || !strings.Contains(res.Stderr, "add --force") {
		t.Fatalf("rm without --force and no terminal: %d %s", res.Code, res.Stderr)
	}
	ccmOK(t, dir, env, "registration", "delete", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "10.0.0.5", "--port", "8080", "--force")
	if out := ccmOK(t, dir, env, "registration", "query", "prod"); strings.TrimSpace(out) != "No results found" {
		t.Fatal(out)
	}
	// Bad input is refused before connecting, saying why.
	res = ccmtest.Run(t, dir, env, "registration", "create", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "web.example", "--port", "80")
	if res.Code != exitUsage || !strings.Contains(res.Stderr, `address "web.example" is not an IP address`) {
		t.Fatalf("%d %s", res.Code, res.Stderr)
	}
}

// TestRegistrationOnCCMsStream: a stream created the way CCM's init does
// (no AllowDirect, where CCM's own query fails) is still queried, with a
// warning saying how to fix it; our init then adds AllowDirect.
func TestRegistrationOnCCMsStream(t *testing.T) {
	env, js, _ := remoteEnv(t)
	dir := t.TempDir()
	cfg := registration.StreamConfig(registration.DefaultStream, 1, time.Minute)
	cfg.AllowDirect = false
	if _, err := js.CreateStream(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	ccmOK(t, dir, env, "registration", "create", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "10.0.0.5", "--port", "8080")
	res := ccmtest.Run(t, dir, env, "registration", "query", "--json")
	if res.Code != 0 || !strings.Contains(res.Stdout, `"address": "10.0.0.5"`) || !strings.Contains(res.Stderr, "AllowDirect is off") || !strings.Contains(res.Stderr, "ccm registration init") {
		t.Fatalf("%d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	ccmOK(t, dir, env, "registration", "init")
	if !streamInfo(t, js).AllowDirect {
		t.Fatal("init did not add AllowDirect")
	}
	res = ccmtest.Run(t, dir, env, "registration", "query", "--json")
	if res.Code != 0 || !strings.Contains(res.Stdout, `"address": "10.0.0.5"`) || res.Stderr != "" {
		t.Fatalf("%d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// TestRegisterWhenStable: a manifest's resource registers when it is
// stable (its health check passes), once per run, never in noop; one whose
// check fails does not; registrations() in a later resource's template
// (Jet and expr) sees the entry.
func TestRegisterWhenStable(t *testing.T) {
	env, js, _ := remoteEnv(t)
	dir := t.TempDir()
	ccmOK(t, dir, env, "registration", "init")
	var mu sync.Mutex
	var published []string
	sub, err := js.Conn().Subscribe(registration.SubjectPrefix+".>", func(m *nats.Msg) {
		mu.Lock()
		defer mu.Unlock()
		published = append(published, string(m.Data))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	taken := func() []string {
		t.Helper()
		js.Conn().Flush()
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		p := published
		published = nil
		return p
	}
	os.WriteFile(filepath.Join(dir, "lb.jet"), []byte(`[[ range _, e := registrations("prod", "http", "web", "*") ]]server [[ e.Address ]]:[[ e.Port ]] weight [[ 256 - e.Priority ]]
[[ end ]]`), 0o644)
	m := writeManifest(t, dir, "site.yaml", `
data:
  port: 8080
ccm:
  resources:
    - file:
        - defaults: {owner: "@USER@", group: "@GROUP@", mode: "0644"}
        - @DIR@/web.conf:
            content: "web\n"
            health_checks:
              - command: /bin/true
            register_when_stable:
              - cluster: prod
                service: web
                protocol: http
                address: "10.0.0.{{ 2 + 3 }}"
                port: "{{ Data.port }}"
                priority: 10
                ttl: 10m
                annotations:
                  prometheus.io/scrape: "true"
        - @DIR@/sick.conf:
            content: "sick\n"
            health_checks:
              - command: /bin/false
            register_when_stable:
              - {cluster: prod, service: sick, protocol: http, address: 10.0.0.6, port: 81, priority: 1}
        - @DIR@/lb.conf:
            content: "{{ template('lb.jet') }}"
        - @DIR@/sd.json:
            content: "{{ registrations('prod', '*', '*', '*').PrometheusFileSD() }}"
`)
	// Noop: nothing is published.
	run, res := applyJSONEnv(t, dir, env, m, "--noop", "--register", "jetstream")
	if got := taken(); len(got) != 0 {
		t.Fatalf("noop published %v", got)
	}
	if !strings.Contains(strings.Join(run.Events[0].Messages, ";"), "would publish 1 registration entries (noop)") {
		t.Fatalf("%+v\n%s", run.Events[0], res.Stderr)
	}
	// A real run publishes the stable resource's entry, templated.
	run, res = applyJSONEnv(t, dir, env, m, "--register", "jetstream")
	got := taken()
	if len(got) != 1 || got[0] != `{"cluster":"prod","service":"web","protocol":"http","address":"10.0.0.5","port":8080,"priority":10,"annotations":{"prometheus.io/scrape":"true"},"ttl":"10m0s"}` {
		b, _ := json.Marshal(run.Events)
		t.Fatalf("published %v\n%s\n%s", got, res.Stderr, b)
	}
	if !strings.Contains(strings.Join(run.Events[0].Messages, ";"), "registered prod/web/http 10.0.0.5:8080 ttl 10m0s on jetstream") {
		t.Fatalf("%+v", run.Events[0])
	}
	if !strings.Contains(strings.Join(run.Events[1].Messages, ";"), "register_when_stable: not published: health check false is warning") {
		t.Fatalf("%+v", run.Events[1])
	}
	lb, _ := os.ReadFile(filepath.Join(dir, "lb.conf"))
	if string(lb) != "server 10.0.0.5:8080 weight 246\n" {
		t.Fatalf("%q", lb)
	}
	sd, _ := os.ReadFile(filepath.Join(dir, "sd.json"))
	if !strings.Contains(string(sd), `"10.0.0.5:8080"`) {
		t.Fatal(string(sd))
	}
	// The next run, stable, publishes again (once): it refreshes the TTL.
	applyJSONEnv(t, dir, env, m, "--register", "jetstream")
	if got := taken(); len(got) != 1 {
		t.Fatalf("second run published %v", got)
	}
	// A health-check-only run publishes too (it keeps the TTL fresh while
	// the service stays healthy), still only the healthy resource.
	applyJSONEnv(t, dir, env, m, "--monitor-only", "--register", "jetstream")
	if got := taken(); len(got) != 1 || !strings.Contains(got[0], `"address":"10.0.0.5"`) {
		t.Fatalf("monitor-only run published %v", got)
	}
	// Without --register nothing is published and the event says so.
	run, _ = applyJSON(t, dir, m)
	if got := taken(); len(got) != 0 || !strings.Contains(strings.Join(run.Events[0].Messages, ";"), "not published: no registration destination is configured") {
		t.Fatalf("%v %+v", got, run.Events[0])
	}
}

// TestRegistrationsNATSDown: registrations() and register_when_stable fail
// the resource quickly and say NATS is unreachable.
func TestRegistrationsNATSDown(t *testing.T) {
	dir := t.TempDir()
	m := writeManifest(t, dir, "site.yaml", `
ccm:
  resources:
    - file:
        - @DIR@/lb.conf: {content: "{{ len(registrations('prod', '*', '*', '*')) }}", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir(), "NATS_URL=nats://127.0.0.1:1"}
	start := time.Now()
	res := ccmtest.Run(t, dir, env, "apply", m)
	if res.Code != exitFailed || !strings.Contains(res.Stdout, "registrations: NATS is unreachable") || time.Since(start) > 20*time.Second {
		t.Fatalf("%d %s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// TestRegistrationInteropWithCCM runs CCM's binary (when present, as
// /tmp/perf-ccm-bin) against our stream and entries, and ours against
// its.
func TestRegistrationInteropWithCCM(t *testing.T) {
	const ccmBin = "/tmp/perf-ccm-bin"
	if _, err := os.Stat(ccmBin); err != nil {
		t.Skip("CCM's binary is not at " + ccmBin)
	}
	env, _, _ := remoteEnv(t)
	dir := t.TempDir()
	theirs := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(ccmBin, args...)
		cmd.Dir, cmd.Env = dir, append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("CCM %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	theirs("registration", "init")
	theirs("registration", "create", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "10.0.0.1", "--port", "80")
	if out := ccmOK(t, dir, env, "registration", "query", "--json"); !strings.Contains(out, `"address": "10.0.0.1"`) {
		t.Fatal(out)
	}
	ccmOK(t, dir, env, "registration", "init")
	ccmOK(t, dir, env, "registration", "create", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "10.0.0.2", "--port", "80", "-A", "v=1")
	// Ours overwrites CCM's entry for the same tuple: the same subject.
	ccmOK(t, dir, env, "registration", "create", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "10.0.0.1", "--port", "80", "--priority", "5")
	var got []map[string]any
	if err := json.Unmarshal([]byte(theirs("registration", "query", "--json")), &got); err != nil || len(got) != 2 || got[0]["priority"] != float64(5) || got[1]["annotations"] == nil {
		t.Fatalf("%v %v", got, err)
	}
	theirs("registration", "rm", "--cluster", "prod", "--service", "web", "--protocol", "http", "--address", "10.0.0.2", "--port", "80", "--force")
	if out := ccmOK(t, dir, env, "registration", "query", "--json"); strings.Contains(out, "10.0.0.2") {
		t.Fatal(out)
	}
}

// TestAgentRegisters: the agent configuration's registration: jetstream
// publishes register_when_stable entries; a node whose grants do not allow
// net nats:registration/STREAM is refused, saying which grant to add.
func TestAgentRegisters(t *testing.T) {
	env, js, _ := remoteEnv(t)
	work := t.TempDir()
	ccmOK(t, work, env, "registration", "init")
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	writeManifest(t, work, "m.yaml", `
ccm:
  resources:
    - file:
        - `+out+`/app: 
            content: "app"
            owner: "@USER@"
            group: "@GROUP@"
            mode: "0644"
            register_when_stable:
              - {cluster: prod, service: app, protocol: http, address: 10.0.0.7, port: 8080, priority: 10, ttl: 1m}
`)
	grants := "fs_read: [\"" + work + "/**\"]\nfs_write: [\"" + out + "/**\"]\nusers: true\n"
	os.WriteFile(filepath.Join(work, "narrow.yaml"), []byte(grants), 0o644)
	os.WriteFile(filepath.Join(work, "grants.yaml"), []byte(grants+"net: [\"nats:registration/REGISTRATION\"]\n"), 0o644)
	cfg := "manifests: [m.yaml]\ncache_dir: " + filepath.Join(work, "cache") + "\nregistration: jetstream\nresults: false\n"
	os.WriteFile(filepath.Join(work, "narrow-agent.yaml"), []byte(cfg+"grants: narrow.yaml\n"), 0o644)
	os.WriteFile(filepath.Join(work, "agent.yaml"), []byte(cfg+"grants: grants.yaml\n"), 0o644)

	res := ccmtest.Run(t, work, env, "agent", "--config", "narrow-agent.yaml", "--once", "--node", "web1")
	if res.Code != 1 || !strings.Contains(res.Stdout, `do not allow net \"nats:registration/REGISTRATION\"`) {
		t.Fatalf("exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	ccmOK(t, work, env, "agent", "--config", "agent.yaml", "--once", "--node", "web1")
	got, _, err := registration.Lookup(context.Background(), js, registration.DefaultStream, "prod", "http", "app", "*")
	if err != nil || len(got) != 1 || got[0].Address != "10.0.0.7" || got[0].TTL != "1m0s" {
		t.Fatalf("%v %v", got, err)
	}
}
