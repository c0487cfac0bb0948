package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"strconv"
	"sync"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// member is one entry of a test archive.
type member struct {
	name string
	body string
	typ  byte // tar type; 0 = regular file
	mode int64
	link string
}

func files(kv ...string) []member {
	var out []member
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, member{name: kv[i], body: kv[i+1]})
	}
	return out
}

// build writes the members as an archive of format (tar.gz, tar or zip).
func build(t *testing.T, format string, ms []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	if format == "zip" {
		zw := zip.NewWriter(&buf)
		for _, m := range ms {
			hdr := &zip.FileHeader{Name: m.name, Method: zip.Deflate}
			mode := os.FileMode(m.mode)
			if mode == 0 {
				mode = 0o644
			}
			switch m.typ {
			case tar.TypeDir:
				mode |= os.ModeDir
			case tar.TypeSymlink:
				mode |= os.ModeSymlink
				m.body = m.link
			}
			hdr.SetMode(mode)
			w, err := zw.CreateHeader(hdr)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(m.body))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	var tw *tar.Writer
	var gz *gzip.Writer
	if format == "tar" {
		tw = tar.NewWriter(&buf)
	} else {
		gz = gzip.NewWriter(&buf)
		tw = tar.NewWriter(gz)
	}
	for _, m := range ms {
		typ := m.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := m.mode
		if mode == 0 {
			mode = 0o644
			if typ == tar.TypeDir {
				mode = 0o755
			}
		}
		hdr := &tar.Header{Name: m.name, Typeflag: typ, Mode: mode, Linkname: m.link, Uname: "games", Uid: 5, Gid: 60}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(m.body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(m.body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if gz != nil {
		gz.Close()
	}
	return buf.Bytes()
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// server is a real local HTTP(S) server of archives by path, counting the
// requests it sees.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	files    map[string][]byte
	auth     [2]string         // required basic auth, when set
	header   map[string]string // required headers
	redirect map[string]string // path → Location
}

func newServer(t *testing.T, tls bool) *server {
	s := &server{files: map[string][]byte{}, redirect: map[string]string{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r)
		s.mu.Unlock()
		if s.auth[0] != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != s.auth[0] || p != s.auth[1] {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		for k, v := range s.header {
			if r.Header.Get(k) != v {
				http.Error(w, "missing header "+k, http.StatusForbidden)
				return
			}
		}
		if to, ok := s.redirect[r.URL.Path]; ok {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		b, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	})
	if tls {
		s.Server = httptest.NewTLSServer(h)
	} else {
		s.Server = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// roots trusts the TLS servers given.
func roots(srvs ...*server) *x509.CertPool {
	p := x509.NewCertPool()
	for _, s := range srvs {
		if s.Certificate() != nil {
			p.AddCert(s.Certificate())
		}
	}
	return p
}

func me(t *testing.T) (string, string) {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	g, err := user.LookupGroupId(u.Gid)
	if err != nil {
		t.Fatal(err)
	}
	return u.Username, g.Name
}

// newHost is a fakehost for the archive plugin over the real host
// handlers, trusting srvs' certificates; grants nil = unconfined.
func newHost(grants trust.Chain, srvs ...*server) *fakehost.Host {
	return &fakehost.Host{Info: (&archiveType{}).Info(), Grants: grants, RootCAs: roots(srvs...)}
}

func apply(h *fakehost.Host, name string, props map[string]any, noop bool) abi.Result {
	return applyTuned(h, tuning{}, name, props, noop)
}

// applyTuned is apply with lowered sizes (parts, the bomb check's start),
// so the tests of what they bound stay fast, also under -race.
func applyTuned(h *fakehost.Host, tune tuning, name string, props map[string]any, noop bool) abi.Result {
	h.ReadOnly = noop
	h.Properties = props
	return (&archiveType{tune: tune}).Apply(h, abi.Request{Type: typeName, Name: name, Properties: props, Noop: noop})
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }

func absReq(name string, props map[string]any) abi.ValidateRequest {
	p := map[string]any{"name": name}
	for k, v := range props {
		p[k] = v
	}
	return abi.ValidateRequest{Properties: p}
}
