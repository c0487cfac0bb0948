package source

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/natstest"
	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func bundleOf(t testing.TB, manifest string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	tw.WriteHeader(&tar.Header{Name: "manifest.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(manifest))})
	tw.Write([]byte(manifest))
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// useContext writes a nats CLI context file named CCM (the default) for
// url under a fresh XDG_CONFIG_HOME.
func useContext(t *testing.T, ctx map[string]any) string {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("NATS_CONTEXT", "")
	b, _ := json.Marshal(ctx)
	p := filepath.Join(dir, "nats", "context")
	os.MkdirAll(p, 0o755)
	os.WriteFile(filepath.Join(p, "CCM.json"), b, 0o600)
	return filepath.Join(p, "CCM.json")
}

func objStore(t *testing.T, url, token, bucket string) jetstream.ObjectStore {
	nc, err := nats.Connect(url, nats.Token(token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	obj, err := js.CreateObjectStore(context.Background(), jetstream.ObjectStoreConfig{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestParse(t *testing.T) {
	for name, want := range map[string]string{
		"obj://VENDOR/site/bundle.tgz":      "nats:obj/VENDOR",
		"kv://CONFIG/hiera":                 "nats:kv/CONFIG",
		"https://u:p@example.com/b.tgz":     "example.com:443",
		"https://example.com:8443/b.tar.gz": "example.com:8443",
	} {
		r, err := Parse(name)
		if err != nil || r.NetTarget() != want {
			t.Errorf("%s: %v %v, want %s", name, r, err, want)
		}
		if strings.Contains(r.String(), ":p@") {
			t.Errorf("%s: password shown: %s", name, r)
		}
	}
	r, _ := Parse("obj://VENDOR/site/bundle.tgz")
	if r.Bucket != "VENDOR" || r.Key != "site/bundle.tgz" {
		t.Errorf("obj parse: %+v", r)
	}
	for _, bad := range []string{"obj://VENDOR", "obj:///key", "ftp://x/y", "kv://B/"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestObjectStore(t *testing.T) {
	url := natstest.Start(t, "s3cret")
	useContext(t, map[string]any{"url": url, "token": "s3cret"})
	obj := objStore(t, url, "s3cret", "VENDOR")
	ctx := context.Background()
	b1 := bundleOf(t, "# one\n")
	obj.PutBytes(ctx, "site.tgz", b1)

	seed, pub, _ := bundle.Keygen()
	_, otherPub, _ := bundle.Keygen()

	t.Run("fetch, pin, immutable for the run", func(t *testing.T) {
		f := New(Options{Cache: t.TempDir()})
		defer f.Close()
		x, err := f.Bundle(ctx, "obj://VENDOR/site.tgz", bundle.Digest(b1))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(x.Manifest); string(got) != "# one\n" {
			t.Fatalf("manifest %q", got)
		}
		// Replaced on the server during the run: the run keeps what it
		// fetched first; a pin for the new bytes is refused.
		b2 := bundleOf(t, "# two\n")
		obj.PutBytes(ctx, "site.tgz", b2)
		y, err := f.Bundle(ctx, "obj://VENDOR/site.tgz", "")
		if err != nil || y.Root != x.Root {
			t.Fatalf("second fetch: %v %v", y, err)
		}
		if got, _ := os.ReadFile(y.Manifest); string(got) != "# one\n" {
			t.Fatalf("second fetch sees %q", got)
		}
		if _, err := f.Bundle(ctx, "obj://VENDOR/site.tgz", bundle.Digest(b2)); err == nil || !strings.Contains(err.Error(), "the pin says") {
			t.Fatalf("pin of the replacement: %v", err)
		}
		// The next run sees the new object.
		g := New(Options{Cache: t.TempDir()})
		defer g.Close()
		z, err := g.Bundle(ctx, "obj://VENDOR/site.tgz", "")
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(z.Manifest); string(got) != "# two\n" {
			t.Fatalf("next run sees %q", got)
		}
		obj.PutBytes(ctx, "site.tgz", b1)
	})
	t.Run("wrong pin", func(t *testing.T) {
		f := New(Options{Cache: t.TempDir()})
		defer f.Close()
		_, err := f.Bundle(ctx, "obj://VENDOR/site.tgz", strings.Repeat("ab", 32))
		if err == nil || !strings.Contains(err.Error(), "bundle obj://VENDOR/site.tgz: sha256 is") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("signatures", func(t *testing.T) {
		pol := bundle.Policy{Trusted: []string{pub}, RequireSignature: true}
		f := New(Options{Cache: t.TempDir(), Policy: pol})
		defer f.Close()
		if _, err := f.Bundle(ctx, "obj://VENDOR/site.tgz", ""); err == nil || !strings.Contains(err.Error(), "unsigned") {
			t.Fatalf("unsigned: %v", err)
		}
		sig, _ := bundle.Sign(b1, seed)
		obj.PutBytes(ctx, "site.tgz.sig", sig)
		if _, err := f.Bundle(ctx, "obj://VENDOR/site.tgz", ""); err != nil {
			t.Fatalf("signed: %v", err)
		}
		g := New(Options{Cache: t.TempDir(), Policy: bundle.Policy{Trusted: []string{otherPub}, RequireSignature: true}})
		defer g.Close()
		if _, err := g.Bundle(ctx, "obj://VENDOR/site.tgz", ""); err == nil || !strings.Contains(err.Error(), "not in the trusted keys") {
			t.Fatalf("untrusted: %v", err)
		}
		// Tampered: the bundle replaced, the old signature left beside it.
		obj.PutBytes(ctx, "site.tgz", bundleOf(t, "# evil\n"))
		h := New(Options{Cache: t.TempDir(), Policy: pol})
		defer h.Close()
		if _, err := h.Bundle(ctx, "obj://VENDOR/site.tgz", ""); err == nil || !strings.Contains(err.Error(), "tampered") {
			t.Fatalf("tampered: %v", err)
		}
		obj.PutBytes(ctx, "site.tgz", b1)
		obj.Delete(ctx, "site.tgz.sig")
	})
	t.Run("missing object and bucket", func(t *testing.T) {
		f := New(Options{Cache: t.TempDir()})
		defer f.Close()
		if _, err := f.Bundle(ctx, "obj://VENDOR/nope.tgz", ""); err == nil || !strings.Contains(err.Error(), `no object "nope.tgz" in bucket "VENDOR"`) {
			t.Fatalf("%v", err)
		}
		if _, err := f.Bundle(ctx, "obj://NOPE/x.tgz", ""); err == nil || !strings.Contains(err.Error(), `bucket "NOPE"`) {
			t.Fatalf("%v", err)
		}
	})
}

func TestKV(t *testing.T) {
	url := natstest.Start(t, "")
	useContext(t, map[string]any{"url": url})
	nc, _ := nats.Connect(url)
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "CONFIG"})
	if err != nil {
		t.Fatal(err)
	}
	kv.PutString(ctx, "motd", "hello")
	f := New(Options{Cache: t.TempDir()})
	defer f.Close()
	if v, err := f.KVGet(ctx, "CONFIG", "motd"); err != nil || v != "hello" {
		t.Fatalf("%q %v", v, err)
	}
	if _, err := f.KVGet(ctx, "CONFIG", "nope"); err == nil || !strings.Contains(err.Error(), `could not get key "nope" from bucket "CONFIG"`) {
		t.Fatalf("missing key: %v", err)
	}
	if b, err := f.Get(ctx, "kv://CONFIG/motd", 100); err != nil || string(b) != "hello" {
		t.Fatalf("Get: %q %v", b, err)
	}
	if _, err := f.Bundle(ctx, "kv://CONFIG/motd", ""); err == nil {
		t.Fatal("a kv:// bundle was accepted")
	}
}

func TestContexts(t *testing.T) {
	url := natstest.Start(t, "tok")
	ctx := context.Background()
	t.Run("default context file with token", func(t *testing.T) {
		useContext(t, map[string]any{"url": url, "token": "tok"})
		f := New(Options{Cache: t.TempDir()})
		defer f.Close()
		_, err := f.Bundle(ctx, "obj://NONE/x", "")
		if err == nil || !strings.Contains(err.Error(), `bucket "NONE"`) {
			t.Fatalf("connected but: %v", err)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		useContext(t, map[string]any{"url": url, "token": "bad"})
		f := New(Options{Cache: t.TempDir()})
		defer f.Close()
		_, err := f.Bundle(ctx, "obj://NONE/x", "")
		if err == nil || !strings.Contains(err.Error(), "Authorization Violation") || !strings.Contains(err.Error(), "CCM.json") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("named, NATS_CONTEXT and absolute path", func(t *testing.T) {
		file := useContext(t, map[string]any{"url": url, "token": "tok"})
		os.Rename(file, filepath.Join(filepath.Dir(file), "other.json"))
		for _, tc := range []struct{ flag, env string }{{"other", ""}, {"", "other"}, {filepath.Join(filepath.Dir(file), "other.json"), ""}} {
			t.Setenv("NATS_CONTEXT", tc.env)
			f := New(Options{Context: tc.flag, Cache: t.TempDir()})
			_, err := f.Bundle(ctx, "obj://NONE/x", "")
			f.Close()
			if err == nil || !strings.Contains(err.Error(), `bucket "NONE"`) {
				t.Fatalf("%+v: %v", tc, err)
			}
		}
		t.Setenv("NATS_CONTEXT", "")
		f := New(Options{Context: "missing", Cache: t.TempDir()})
		defer f.Close()
		if _, err := f.Bundle(ctx, "obj://NONE/x", ""); err == nil || !strings.Contains(err.Error(), `nats context "missing"`) {
			t.Fatalf("missing named context: %v", err)
		}
	})
	t.Run("server that hangs", func(t *testing.T) {
		// Accepts connections and never says a word.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
			}
		}()
		useContext(t, map[string]any{"url": "nats://" + l.Addr().String()})
		f := New(Options{Cache: t.TempDir(), Timeout: 300 * time.Millisecond})
		defer f.Close()
		start := time.Now()
		_, err = f.Bundle(ctx, "obj://B/x", "")
		if err == nil || !strings.HasPrefix(err.Error(), "bundle obj://B/x: ") || !strings.Contains(err.Error(), "nats nats://"+l.Addr().String()) || !strings.Contains(err.Error(), "timeout") {
			t.Fatalf("%v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %s", d)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		useContext(t, map[string]any{"url": "nats://127.0.0.1:1"})
		f := New(Options{Cache: t.TempDir()})
		defer f.Close()
		if _, err := f.Bundle(ctx, "obj://B/x", ""); err == nil || !strings.Contains(err.Error(), "bundle obj://B/x: nats nats://127.0.0.1:1") {
			t.Fatalf("%v", err)
		}
	})
}

func TestHTTPS(t *testing.T) {
	b := bundleOf(t, "# web\n")
	hang := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/b.tgz":
			if u, p, ok := r.BasicAuth(); !ok || u != "op" || p != "pw" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.Write(b)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/hang":
			<-hang
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer close(hang)
	ctx := context.Background()
	f := New(Options{Cache: t.TempDir(), HTTPClient: srv.Client(), Timeout: 500 * time.Millisecond})
	x, err := f.Bundle(ctx, strings.Replace(srv.URL, "https://", "https://op:pw@", 1)+"/b.tgz", bundle.Digest(b))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(x.Manifest); string(got) != "# web\n" {
		t.Fatalf("%q", got)
	}
	for _, tc := range []struct{ path, want string }{
		{"/b.tgz", "401"},
		{"/loop", "more than 5 redirects"},
		{"/hang", "no answer within 500ms"},
		{"/missing.tgz", "404"},
	} {
		start := time.Now()
		_, err := f.Bundle(ctx, strings.Replace(srv.URL, "https://", "https://op:wrong@", 1)+tc.path, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "wrong") {
			t.Errorf("%s: %v, want %q and no password", tc.path, err, tc.want)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s took %s", tc.path, d)
		}
	}
}
