package source

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// switchable is a real http server whose answers the test changes.
type switchable struct {
	mu     sync.Mutex
	status int               // 0: serve files
	files  map[string][]byte // path: body
	etag   bool              // send an ETag (the body's sha256)
	hits   map[string]int    // path: requests
	cond   int               // requests carrying If-None-Match
}

func newSwitchable(t *testing.T) (*switchable, *httptest.Server) {
	s := &switchable{files: map[string][]byte{}, hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.hits[r.URL.Path]++
		if s.status != 0 {
			w.WriteHeader(s.status)
			return
		}
		b, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if s.etag {
			tag := `"` + bundle.Digest(b) + `"`
			w.Header().Set("ETag", tag)
			if r.Header.Get("If-None-Match") != "" {
				s.cond++
				if r.Header.Get("If-None-Match") == tag {
					w.WriteHeader(http.StatusNotModified)
					return
				}
			}
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *switchable) set(status int, files map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
	for k, v := range files {
		s.files[k] = v
	}
}

// TestLastGoodBundle: a verified bundle is kept; when the server is down
// (503, then gone) the kept copy is used and reported, but only while it
// still verifies under the current trusted keys and pin; an answer that
// fails verification, or a 404, never falls back.
func TestLastGoodBundle(t *testing.T) {
	seed, pub, _ := bundle.Keygen()
	_, otherPub, _ := bundle.Keygen()
	b1 := bundleOf(t, "# one\n")
	sig1, _ := bundle.Sign(b1, seed)
	s, srv := newSwitchable(t)
	s.set(0, map[string][]byte{"/b.tgz": b1, "/b.tgz" + bundle.SigSuffix: sig1})
	name := srv.URL + "/b.tgz"
	cache, kept := t.TempDir(), filepath.Join(t.TempDir(), "last-good")
	signed := bundle.Policy{Trusted: []string{pub}, RequireSignature: true}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fetcher := func(pol bundle.Policy) *Fetcher {
		return New(Options{Cache: cache, LastGood: kept, Policy: pol, Timeout: time.Second, Now: func() time.Time { return clock }})
	}
	ctx := context.Background()

	f := fetcher(signed)
	x, err := f.Bundle(ctx, name, "")
	if err != nil || x.Digest != bundle.Digest(b1) || len(f.Fallbacks()) != 0 {
		t.Fatalf("first fetch: %v %+v %v", err, x, f.Fallbacks())
	}
	if fi, err := os.Stat(kept); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("last-good cache: %v %v", fi, err)
	}

	clock = clock.Add(90 * time.Minute)
	s.set(http.StatusServiceUnavailable, nil)
	f = fetcher(signed)
	x, err = f.Bundle(ctx, name, "")
	if err != nil || x.Digest != bundle.Digest(b1) {
		t.Fatalf("503: %v", err)
	}
	fb := f.Fallbacks()
	if len(fb) != 1 || fb[0].Name != name || !strings.Contains(fb[0].Reason, "503") || fb[0].Age != 90*time.Minute || fb[0].Digest != x.Digest {
		t.Fatalf("fallbacks: %+v", fb)
	}
	if got, _ := os.ReadFile(x.Manifest); string(got) != "# one\n" {
		t.Fatalf("manifest %q", got)
	}
	// The pin still holds: used; a different pin: refused.
	if _, err := fetcher(signed).Bundle(ctx, name, bundle.Digest(b1)); err != nil {
		t.Fatalf("pinned: %v", err)
	}
	other := bundle.Digest([]byte("x"))
	if _, err := fetcher(signed).Bundle(ctx, name, other); err == nil || !strings.Contains(err.Error(), "no longer verifies") || !strings.Contains(err.Error(), "503") {
		t.Fatalf("other pin: %v", err)
	}
	// The signer is no longer trusted: refused.
	f = fetcher(bundle.Policy{Trusted: []string{otherPub}, RequireSignature: true})
	if _, err := f.Bundle(ctx, name, ""); err == nil || !strings.Contains(err.Error(), "no longer verifies") || !strings.Contains(err.Error(), "not in the trusted keys") || len(f.Fallbacks()) != 0 {
		t.Fatalf("untrusted signer: %v", err)
	}

	// The server answers, with a bundle that does not verify: no fallback.
	s.set(0, map[string][]byte{"/b.tgz": bundleOf(t, "# evil\n")})
	f = fetcher(signed)
	if _, err := f.Bundle(ctx, name, ""); err == nil || !strings.Contains(err.Error(), "signature") || strings.Contains(err.Error(), "last-good") || len(f.Fallbacks()) != 0 {
		t.Fatalf("bad bundle: %v", err)
	}
	// A 404 is an answer too.
	if _, err := fetcher(signed).Bundle(ctx, srv.URL+"/gone.tgz", ""); err == nil || !strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), "last-good") {
		t.Fatalf("404: %v", err)
	}

	// The server is gone altogether; the kept copy was torn: refused.
	srv.Close()
	if _, err := fetcher(signed).Bundle(ctx, name, ""); err != nil {
		t.Fatalf("server gone: %v", err)
	}
	body, _ := filepath.Glob(filepath.Join(kept, "*.body"))
	if len(body) != 1 {
		t.Fatalf("kept: %v", body)
	}
	os.WriteFile(body[0], bundleOf(t, "# swapped\n"), 0o600)
	if _, err := fetcher(bundle.Policy{}).Bundle(ctx, name, ""); err == nil || !strings.Contains(err.Error(), "does not match its recorded sha256") {
		t.Fatalf("torn copy: %v", err)
	}
}

// TestLastGoodData: data (Get) falls back the same way, and says so.
func TestLastGoodData(t *testing.T) {
	s, srv := newSwitchable(t)
	s.set(0, map[string][]byte{"/data.yaml": []byte("a: 1\n")})
	kept := filepath.Join(t.TempDir(), "lg")
	ctx := context.Background()
	f := New(Options{LastGood: kept})
	if b, err := f.Get(ctx, srv.URL+"/data.yaml", 1<<20); err != nil || string(b) != "a: 1\n" {
		t.Fatalf("%q %v", b, err)
	}
	s.set(http.StatusBadGateway, nil)
	f = New(Options{LastGood: kept})
	b, err := f.Get(ctx, srv.URL+"/data.yaml", 1<<20)
	if err != nil || string(b) != "a: 1\n" || len(f.Fallbacks()) != 1 || !strings.Contains(f.Fallbacks()[0].Reason, "502") {
		t.Fatalf("%q %v %+v", b, err, f.Fallbacks())
	}
	// Without a last-good cache the error stands.
	if _, err := New(Options{}).Get(ctx, srv.URL+"/data.yaml", 1<<20); err == nil || !strings.Contains(err.Error(), "502") {
		t.Fatal(err)
	}
	// Nothing kept for this name: the error says both.
	if _, err := New(Options{LastGood: kept}).Get(ctx, srv.URL+"/other.yaml", 1<<20); err == nil || !strings.Contains(err.Error(), "no last-good copy") {
		t.Fatal(err)
	}
}

// TestHTTPWatch: conditional GETs; a 304 is no change, a new ETag (or,
// without validators, a new body) is one; a source back from an outage
// seen for the first time is a change.
func TestHTTPWatch(t *testing.T) {
	s, srv := newSwitchable(t)
	s.set(0, map[string][]byte{"/b.tgz": []byte("one"), "/plain": []byte("one")})
	s.etag = true
	ctx := context.Background()
	w, err := New(Options{}).WatchHTTP(srv.URL + "/b.tgz")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, false} {
		if c, err := w.Poll(ctx); err != nil || c != want {
			t.Fatalf("poll %d: %v %v", i, c, err)
		}
	}
	if s.cond != 2 {
		t.Fatalf("%d conditional requests, want 2", s.cond)
	}
	s.set(0, map[string][]byte{"/b.tgz": []byte("two")})
	if c, err := w.Poll(ctx); err != nil || !c {
		t.Fatalf("after the change: %v %v", c, err)
	}
	if c, err := w.Poll(ctx); err != nil || c {
		t.Fatalf("after that: %v %v", c, err)
	}

	s.etag = false
	p, _ := New(Options{}).WatchHTTP(srv.URL + "/plain")
	if c, err := p.Poll(ctx); err != nil || c {
		t.Fatal(c, err)
	}
	s.set(0, map[string][]byte{"/plain": []byte("two")})
	if c, err := p.Poll(ctx); err != nil || !c {
		t.Fatal("no validators, new body:", c, err)
	}

	s.set(http.StatusServiceUnavailable, nil)
	q, _ := New(Options{}).WatchHTTP(srv.URL + "/plain")
	if _, err := q.Poll(ctx); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatal(err)
	}
	s.set(0, nil)
	if c, err := q.Poll(ctx); err != nil || !c {
		t.Fatal("back from an outage:", c, err)
	}
	if _, err := New(Options{}).WatchHTTP("obj://b/k"); err == nil {
		t.Fatal("obj:// polled")
	}
}

// TestLastGoodNATS: obj:// bundles and kv:// data fall back when the
// nats-server is gone; a missing object on a live server does not.
func TestLastGoodNATS(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(s.Shutdown)
	url := s.ClientURL()
	useContext(t, map[string]any{"url": url})
	ctx := context.Background()
	b := bundleOf(t, "# obj\n")
	if _, err := objStore(t, url, "", "SITE").PutBytes(ctx, "site.tar.gz", b); err != nil {
		t.Fatal(err)
	}
	nc, _ := nats.Connect(url)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "DATA"})
	if err != nil {
		t.Fatal(err)
	}
	kv.PutString(ctx, "common", "a: 1\n")

	cache, kept := t.TempDir(), filepath.Join(t.TempDir(), "lg")
	fetch := func() (*Fetcher, error, error) {
		f := New(Options{Cache: cache, LastGood: kept, Timeout: 2 * time.Second})
		defer f.Close()
		_, berr := f.Bundle(ctx, "obj://SITE/site.tar.gz", bundle.Digest(b))
		v, kerr := f.KVGet(ctx, "DATA", "common")
		if kerr == nil && v != "a: 1\n" {
			t.Fatalf("kv %q", v)
		}
		return f, berr, kerr
	}
	if f, berr, kerr := fetch(); berr != nil || kerr != nil || len(f.Fallbacks()) != 0 {
		t.Fatalf("live: %v %v %v", berr, kerr, f.Fallbacks())
	}
	f := New(Options{Cache: cache, LastGood: kept, Timeout: 2 * time.Second})
	if _, err := f.Bundle(ctx, "obj://SITE/other.tar.gz", ""); err == nil || !strings.Contains(err.Error(), "no object") || strings.Contains(err.Error(), "last-good") {
		t.Fatalf("missing object: %v", err)
	}
	f.Close()

	s.Shutdown()
	s.WaitForShutdown()
	f, berr, kerr := fetch()
	fb := f.Fallbacks()
	if berr != nil || kerr != nil || len(fb) != 2 || fb[0].Name != "obj://SITE/site.tar.gz" || fb[1].Name != "kv://DATA/common" {
		t.Fatalf("server gone: %v %v %+v", berr, kerr, fb)
	}

	// A last-good directory others may write to is not read.
	os.Chmod(kept, 0o777)
	if _, berr, _ := fetch(); berr == nil || !strings.Contains(berr.Error(), "not a private directory") {
		t.Fatalf("open directory: %v", berr)
	}
}

// BenchmarkHTTPWatchPoll is one unchanged poll: a conditional GET
// answered 304, over a kept-alive connection.
func BenchmarkHTTPWatchPoll(b *testing.B) {
	s := &switchable{files: map[string][]byte{"/b.tgz": bytes.Repeat([]byte("x"), 1<<20)}, hits: map[string]int{}, etag: true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		tag := `"v1"`
		w.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Write(s.files[r.URL.Path])
	}))
	defer srv.Close()
	w, _ := New(Options{}).WatchHTTP(srv.URL + "/b.tgz")
	ctx := context.Background()
	if _, err := w.Poll(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if changed, err := w.Poll(ctx); err != nil || changed {
			b.Fatal(changed, err)
		}
	}
}
