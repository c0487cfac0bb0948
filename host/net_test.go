package host

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// fetchServer is a real local TLS server: /body answers body, /loop
// redirects to itself, /big answers 2 MiB.
func fetchServer(t *testing.T, body string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		switch r.URL.Path {
		case "/body":
			w.Header().Set("X-Echo", r.Header.Get("X-Token"))
			w.Write([]byte(body))
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/big":
			w.Write(make([]byte, 2<<20))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func fetch(t *testing.T, srv *httptest.Server, mode trust.Mode, grants trust.Chain, req abi.NetFetchRequest) (abi.NetFetchResponse, *abi.CallError) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	info := abi.PluginInfo{Type: "t", Capabilities: abi.Capabilities{FSRead: []string{"/**"}, FSWrite: []string{"/**"}, Net: []string{"GET https://*:*"}}}
	r := NewTestDispatcher().Call(context.Background(), TestCall{Caller: trust.Caller{Mode: mode, Grants: grants}, Info: info, RootCAs: pool}, abi.CallNetFetch, req)
	var out abi.NetFetchResponse
	if r.Ok != nil {
		if err := json.Unmarshal(r.Ok, &out); err != nil {
			t.Fatal(err)
		}
	}
	return out, r.Error
}

func TestNetFetch(t *testing.T) {
	srv, hits := fetchServer(t, "hello")
	dir := t.TempDir()
	want := sha256.Sum256([]byte("hello"))
	wantHex := hex.EncodeToString(want[:])

	t.Run("inline body, headers both ways", func(t *testing.T) {
		out, cerr := fetch(t, srv, trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/body?token=secret", Headers: []string{"X-Token: t1"}})
		if cerr != nil || out.Status != 200 || string(out.Body) != "hello" || out.SHA256 != wantHex || out.Size != 5 {
			t.Fatalf("%+v %v", out, cerr)
		}
		if !strings.Contains(strings.Join(out.Headers, "\n"), "X-Echo: t1") || strings.Contains(out.URL, "secret") {
			t.Fatalf("headers %q url %q", out.Headers, out.URL)
		}
	})
	t.Run("to a file, checksum", func(t *testing.T) {
		dest := filepath.Join(dir, "f")
		out, cerr := fetch(t, srv, trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/body", Dest: dest, SHA256: wantHex, Mode: 0o640})
		if cerr != nil || !out.Written {
			t.Fatalf("%+v %v", out, cerr)
		}
		if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o640 {
			t.Fatalf("%v %v", fi, err)
		}
		_, cerr = fetch(t, srv, trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/body", Dest: dest, SHA256: strings.Repeat("0", 64)})
		if cerr == nil || !strings.Contains(cerr.Message, "differs from the expected") {
			t.Fatalf("%v", cerr)
		}
		if b, _ := os.ReadFile(dest); string(b) != "hello" {
			t.Fatal("a wrong checksum replaced the file")
		}
	})
	t.Run("size limit", func(t *testing.T) {
		dest := filepath.Join(dir, "big")
		_, cerr := fetch(t, srv, trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/big", Dest: dest, MaxBytes: 1 << 20})
		if cerr == nil || cerr.Code != abi.CodeTooLarge {
			t.Fatalf("%v", cerr)
		}
		if _, err := os.Stat(dest); !os.IsNotExist(err) {
			t.Fatal("an oversized body was written")
		}
		if _, cerr := fetch(t, srv, trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/big"}); cerr == nil || cerr.Code != abi.CodeTooLarge {
			t.Fatalf("inline: %v", cerr)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("left behind: %v", ents)
		}
	})
	t.Run("redirect loop", func(t *testing.T) {
		_, cerr := fetch(t, srv, trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/loop", MaxRedirects: 3})
		if cerr == nil || !strings.Contains(cerr.Message, "more than 3 redirects") {
			t.Fatalf("%v", cerr)
		}
	})
	t.Run("404 is an answer", func(t *testing.T) {
		out, cerr := fetch(t, srv, trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/nope", Dest: filepath.Join(dir, "n")})
		if cerr != nil || out.Status != 404 || out.Written {
			t.Fatalf("%+v %v", out, cerr)
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		r := NewTestDispatcher().Call(context.Background(), TestCall{Info: abi.PluginInfo{Capabilities: abi.Capabilities{Net: []string{"*"}}}}, abi.CallNetFetch, abi.NetFetchRequest{URL: srv.URL + "/body"})
		if r.Error == nil || !strings.Contains(r.Error.Message, "certificate") {
			t.Fatalf("%+v", r)
		}
	})

	before := hits.Load()
	refusals := []struct {
		name   string
		mode   trust.Mode
		grants trust.Chain
		req    abi.NetFetchRequest
		want   string
	}{
		{"noop", trust.ModeNoop, nil, abi.NetFetchRequest{URL: srv.URL + "/body"}, "noop mode is read-only"},
		{"status", trust.ModeStatus, nil, abi.NetFetchRequest{URL: srv.URL + "/body"}, "status mode is read-only"},
		{"health check", trust.ModeHealthCheck, nil, abi.NetFetchRequest{URL: srv.URL + "/body"}, "health-check-only mode is read-only"},
		{"ungranted", trust.ModeApply, trust.Chain{{Net: []string{"https://other.example"}}}, abi.NetFetchRequest{URL: srv.URL + "/body"}, "net not granted for " + srv.URL + "/body"},
		{"http only granted", trust.ModeApply, trust.Chain{{Net: []string{"http://127.0.0.1:*"}}}, abi.NetFetchRequest{URL: srv.URL + "/body"}, "net not granted"},
		{"HEAD only granted", trust.ModeApply, trust.Chain{{Net: []string{"HEAD https://127.0.0.1:*"}}}, abi.NetFetchRequest{URL: srv.URL + "/body"}, "net not granted"},
		{"plugin did not ask", trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/body", Method: "HEAD"}, "capabilities do not request it"},
		{"dest outside fs_write", trust.ModeApply, trust.Chain{{Net: []string{"*"}, FSWrite: []string{"/nowhere/**"}}}, abi.NetFetchRequest{URL: srv.URL + "/body", Dest: filepath.Join(dir, "x")}, "fs_write not granted"},
		{"credentials in the URL", trust.ModeApply, nil, abi.NetFetchRequest{URL: strings.Replace(srv.URL, "https://", "https://u:p@", 1) + "/body"}, "credentials"},
		{"header injection", trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/body", Headers: []string{"X: a\r\nY: b"}}, "header"},
		{"ftp", trust.ModeApply, nil, abi.NetFetchRequest{URL: "ftp://127.0.0.1/x"}, "not an absolute http or https URL"},
		{"POST", trust.ModeApply, nil, abi.NetFetchRequest{URL: srv.URL + "/body", Method: "POST"}, "not GET or HEAD"},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			_, cerr := fetch(t, srv, r.mode, r.grants, r.req)
			if cerr == nil || !strings.Contains(cerr.Message, r.want) {
				t.Fatalf("got %v, want %q", cerr, r.want)
			}
		})
	}
	if hits.Load() != before {
		t.Fatalf("refused calls made %d requests", hits.Load()-before)
	}
}
