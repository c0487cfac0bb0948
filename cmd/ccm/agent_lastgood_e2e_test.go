package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/bundle"
)

// TestAgentLastGood: an agent applies an http bundle; the server then
// answers 503 and the next run applies the last-good copy from the cache
// dir, reported as source "cache" with the reason and age; once the trusted
// keys change so that the copy no longer verifies, it is refused and
// nothing is applied.
func TestAgentLastGood(t *testing.T) {
	env, js, _ := remoteEnv(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	ccmOK(t, work, env, "bundle", "pack", vendorBundle(t, out, "v1"), "--out", "site.tar.gz")
	archive, err := os.ReadFile(filepath.Join(work, "site.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	down := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if r.URL.Path != "/site.tar.gz" {
			http.NotFound(w, r)
			return
		}
		w.Write(archive)
	}))
	defer srv.Close()
	src := srv.URL + "/site.tar.gz"
	os.WriteFile(filepath.Join(work, "grants.yaml"), []byte(`
fs_read: ["`+work+`/**"]
fs_write: ["`+out+`/**"]
net: ["`+strings.TrimPrefix(srv.URL, "http://")+`"]
users: true
`), 0o644)
	config := func(extra string) {
		os.WriteFile(filepath.Join(work, "agent.yaml"), []byte("manifests: ["+src+"]\ncache_dir: "+filepath.Join(work, "cache")+
			"\ngrants: grants.yaml\nnode: lg1\n"+extra), 0o644)
	}
	config("")
	results := resultsOf(t, js, "lg1")

	ccmOK(t, work, env, "agent", "--config", "agent.yaml", "--once")
	r := nextResult(t, results)
	if !r.Successful || r.Source != "" || len(r.Cached) != 0 || r.Digest != bundle.Digest(archive) {
		t.Fatalf("first run: %+v", r)
	}
	if fi, err := os.Stat(filepath.Join(work, "cache", "last-good")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("last-good cache: %v %v", fi, err)
	}

	// The server fails: the last-good copy is applied, and said so.
	mu.Lock()
	down = true
	mu.Unlock()
	os.Remove(filepath.Join(out, "vendor"))
	res := ccmtest.Run(t, work, env, "agent", "--config", "agent.yaml", "--once")
	if res.Code != 0 || !strings.Contains(res.Stderr, "unreachable (server answered 503 Service Unavailable): used its last-good copy") {
		t.Fatalf("503: exit %d\n%s", res.Code, res.Stderr)
	}
	r = nextResult(t, results)
	if !r.Successful || r.Source != "cache" || len(r.Cached) != 1 || r.Cached[0].Name != src ||
		!strings.Contains(r.Cached[0].Reason, "503") || r.Cached[0].Age <= 0 || r.Cached[0].Digest != bundle.Digest(archive) ||
		r.Digest != bundle.Digest(archive) || r.Summary == nil || r.Summary.Changed == 0 {
		t.Fatalf("from the cache: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "vendor")); string(b) != "v1" {
		t.Fatalf("vendor file %q: the cached bundle was not applied", b)
	}
	if st := ccmtest.Run(t, work, env, "fleet", "status"); !strings.Contains(st.Stdout, "ok,cache") {
		t.Fatalf("fleet status does not show the cache:\n%s", st.Stdout)
	}

	// The trusted keys now require a signature the cached bundle lacks: refused.
	_, pub, _ := bundle.Keygen()
	os.WriteFile(filepath.Join(work, "trusted"), []byte(pub+"\n"), 0o644)
	config("trusted_keys: " + filepath.Join(work, "trusted") + "\n")
	os.Remove(filepath.Join(out, "vendor"))
	res = ccmtest.Run(t, work, env, "agent", "--config", "agent.yaml", "--once")
	r = nextResult(t, results)
	if res.Code != 1 || r.Successful || r.Source != "" || !strings.Contains(r.Error, "503") || !strings.Contains(r.Error, "no longer verifies") {
		t.Fatalf("untrusted cached bundle: exit %d %+v\n%s", res.Code, r, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "vendor")); err == nil {
		t.Fatal("a cached bundle that no longer verifies was applied")
	}

	// last_good: false turns the fallback off.
	config("last_good: false\n")
	if res := ccmtest.Run(t, work, env, "agent", "--config", "agent.yaml", "--once"); res.Code != 1 {
		t.Fatalf("last_good: false: exit %d\n%s", res.Code, res.Stderr)
	}
	if r := nextResult(t, results); r.Source != "" || !strings.Contains(r.Error, "503") || strings.Contains(r.Error, "last-good") {
		t.Fatalf("last_good: false: %+v", r)
	}
}
