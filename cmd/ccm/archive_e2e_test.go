package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// archiveServer is a real local HTTPS server of one tar.gz (/app.tar.gz,
// also reached by /moved redirecting to it) counting its requests; env
// makes ccm trust its certificate the way an operator's would be trusted,
// through the system roots (SSL_CERT_FILE).
func archiveServer(t *testing.T, body []byte) (srv *httptest.Server, hits *atomic.Int64, env []string) {
	hits = &atomic.Int64{}
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/app.tar.gz":
			w.Write(body)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, hits, []string{"SSL_CERT_FILE=" + ca}
}

func tarGz(t *testing.T, kv ...string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for i := 0; i+1 < len(kv); i += 2 {
		tw.WriteHeader(&tar.Header{Name: kv[i], Mode: 0o755, Size: int64(len(kv[i+1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(kv[i+1]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return buf.Bytes()
}

// TestArchiveApply: a manifest's archive over HTTPS is fetched and
// extracted once; noop and the second run make no request.
func TestArchiveApply(t *testing.T) {
	t.Parallel()
	// lib.bin is larger than one write: it reaches the host in parts.
	lib := make([]byte, 3<<20)
	rand.NewChaCha8([32]byte{7}).Read(lib)
	body := tarGz(t, "app/bin/app", "#!/bin/sh\necho app\n", "app/VERSION", "1.2.3\n", "app/lib.bin", string(lib))
	s := sha256.Sum256(body)
	srv, hits, env := archiveServer(t, body)
	dir := t.TempDir()
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - archive:
        - @DIR@/dl/app.tar.gz:
            url: `+srv.URL+`/app.tar.gz
            checksum: "`+hex.EncodeToString(s[:])+`"
            extract_parent: @DIR@/opt
            creates: @DIR@/opt/app/bin/app
            owner: "@USER@"
            group: "@GROUP@"
            cleanup: true
`)
	os.Mkdir(filepath.Join(dir, "dl"), 0o755)
	ref := "archive#" + filepath.Join(dir, "dl/app.tar.gz")

	out, res := applyJSONEnv(t, dir, env, "m.yaml", "--noop")
	if res.Code != 0 || !out.event(t, ref).Changed || hits.Load() != 0 {
		t.Fatalf("noop: exit %d, %d requests\n%s", res.Code, hits.Load(), res.Stderr)
	}
	out, res = applyJSONEnv(t, dir, env, "m.yaml")
	if e := out.event(t, ref); res.Code != 0 || !e.Changed || e.Failed {
		t.Fatalf("apply: exit %d %+v\n%s", res.Code, e, res.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "opt/app/VERSION")); string(b) != "1.2.3\n" {
		t.Fatalf("VERSION = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "opt/app/lib.bin")); !bytes.Equal(b, lib) {
		t.Fatalf("lib.bin: %d bytes, not the %d archived", len(b), len(lib))
	}
	if _, err := os.Stat(filepath.Join(dir, "dl/app.tar.gz")); !os.IsNotExist(err) {
		t.Fatal("cleanup left the archive")
	}
	n := hits.Load()
	out, res = applyJSONEnv(t, dir, env, "m.yaml")
	if e := out.event(t, ref); res.Code != 0 || e.Changed || hits.Load() != n {
		t.Fatalf("second run: exit %d %+v, %d new requests", res.Code, e, hits.Load()-n)
	}
}

// TestArchiveVendorConfined: a vendor manifest (allow_apply: false, narrow
// grants) fetches from its granted host only: the same resource pointed at
// another host fails naming the host and the grant, and no request leaves.
func TestArchiveVendorConfined(t *testing.T) {
	t.Parallel()
	body := tarGz(t, "tool", "x")
	granted, grantedHits, _ := archiveServer(t, body)
	other, otherHits, _ := archiveServer(t, body)
	ca := filepath.Join(t.TempDir(), "roots.pem")
	var pems []byte
	for _, s := range []*httptest.Server{granted, other} {
		pems = append(pems, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})...)
	}
	if err := os.WriteFile(ca, pems, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"SSL_CERT_FILE=" + ca}
	dir := t.TempDir()
	grantedHost := strings.TrimPrefix(granted.URL, "https://")
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - apply:
        - vendor/v.yaml:
            allow_apply: false
            grants: {fs_read: ["@DIR@/vendor/**"], fs_write: ["@DIR@/vendor/**"], net: ["GET https://`+grantedHost+`"]}
`)
	writeManifest(t, dir, "vendor/v.yaml", `
ccm:
  resources:
    - archive:
        - @DIR@/vendor/granted.tar.gz:
            url: `+granted.URL+`/app.tar.gz
            extract_parent: @DIR@/vendor/out
            owner: "@USER@"
            group: "@GROUP@"
        - @DIR@/vendor/other.tar.gz:
            url: `+other.URL+`/app.tar.gz
            owner: "@USER@"
            group: "@GROUP@"
`)
	out, res := applyJSONEnv(t, dir, env, "m.yaml")
	if e := out.event(t, "archive#"+filepath.Join(dir, "vendor/granted.tar.gz")); e.Failed || !e.Changed || grantedHits.Load() != 1 {
		t.Fatalf("granted host: %+v\n%s", e, res.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "vendor/out/tool")); string(b) != "x" {
		t.Fatalf("vendor/out/tool = %q", b)
	}
	e := out.event(t, "archive#"+filepath.Join(dir, "vendor/other.tar.gz"))
	otherHost := strings.TrimPrefix(other.URL, "https://")
	msg := strings.Join(e.Error, " ")
	if res.Code != 1 || !e.Failed || !strings.Contains(msg, "net not granted for "+other.URL+"/app.tar.gz (resolved to GET https://"+otherHost+"); add it to grants in the apply") {
		t.Fatalf("exit %d, event %+v\n%s", res.Code, e, res.Stderr)
	}
	if otherHits.Load() != 0 {
		t.Fatal("the ungranted host was reached")
	}
}

// TestArchiveEnsureAndStatus: ccm ensure archive and ccm status archive.
func TestArchiveEnsureAndStatus(t *testing.T) {
	t.Parallel()
	body := tarGz(t, "f", "1")
	s := sha256.Sum256(body)
	sum := hex.EncodeToString(s[:])
	srv, hits, env := archiveServer(t, body)
	dir := t.TempDir()
	args := []string{"ensure", "archive", filepath.Join(dir, "a.tar.gz"), srv.URL + "/app.tar.gz", "--checksum", sum, "--extract", filepath.Join(dir, "x"), "-H", "X-A: b"}
	if res := ccmtest.Run(t, dir, env, args...); res.Code != 0 || !strings.Contains(res.Stdout, "changed") {
		t.Fatalf("ensure: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if res := ccmtest.Run(t, dir, env, args...); res.Code != 0 || !strings.Contains(res.Stdout, "stable") || hits.Load() != 1 {
		t.Fatalf("second ensure: exit %d, %d requests\n%s%s", res.Code, hits.Load(), res.Stdout, res.Stderr)
	}
	res := ccmtest.Run(t, dir, env, "status", "archive", "a.tar.gz")
	if res.Code != 0 || !strings.Contains(res.Stdout, "checksum: "+sum) || !strings.Contains(res.Stdout, "ensure: present") {
		t.Fatalf("status: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	res = ccmtest.Run(t, dir, env, "ensure", "archive", filepath.Join(dir, "b.tar.gz"), srv.URL+"/missing.tar.gz")
	if res.Code != 1 || !strings.Contains(res.Stdout+res.Stderr, "status 404") {
		t.Fatalf("404: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	res = ccmtest.Run(t, dir, env, "ensure", "archive", filepath.Join(dir, "c.tar.gz"), srv.URL+"/app.tar.gz", "--checksum", "abc")
	if res.Code != 2 || !strings.Contains(res.Stderr, "checksum \"abc\" must be a sha256") {
		t.Fatalf("bad checksum: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}
