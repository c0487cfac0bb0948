package data

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadSource(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "h.yaml")
	if err := os.WriteFile(local, []byte("data: {a: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/open.yaml":
			w.Write([]byte("data: {a: 2}\n"))
		case "/auth.yaml":
			if u, p, ok := r.BasicAuth(); !ok || u != "bob" || p != "s3cret" {
				http.Error(w, "no", http.StatusUnauthorized)
				return
			}
			w.Write([]byte("data: {a: 3}\n"))
		case "/huge":
			w.Write([]byte(strings.Repeat("x", MaxSourceSize+1)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	tests := []struct {
		name    string
		src     string
		want    string
		wantErr string // substring
	}{
		{name: "path", src: local, want: "data: {a: 1}\n"},
		{name: "file url", src: "file://" + local, want: "data: {a: 1}\n"},
		{name: "missing path", src: filepath.Join(dir, "nope.yaml"), wantErr: "give an existing YAML/JSON file"},
		{name: "http", src: srv.URL + "/open.yaml", want: "data: {a: 2}\n"},
		{name: "basic auth from url", src: "http://bob:s3cret@" + host + "/auth.yaml", want: "data: {a: 3}\n"},
		{name: "wrong password is redacted", src: "http://bob:wrong@" + host + "/auth.yaml", wantErr: "http://bob:xxxxx@" + host + "/auth.yaml: server answered 401"},
		{name: "not found", src: srv.URL + "/missing", wantErr: "404"},
		{name: "size cap", src: srv.URL + "/huge", wantErr: "larger than"},
		{name: "unreachable is redacted", src: "http://bob:s3cret@127.0.0.1:1/x", wantErr: "bob:xxxxx@127.0.0.1:1"},
		{name: "kv needs nats", src: "kv://bucket/key", wantErr: "kv:// needs NATS"},
		{name: "empty", src: "", wantErr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadSource(context.Background(), tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), ":wrong@") {
					t.Fatalf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
