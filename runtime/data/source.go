package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Limits of LoadSource.
const (
	// SourceTimeout bounds one HTTP fetch: a Hiera source is small, and a
	// hung server must not hang a run.
	SourceTimeout = 30 * time.Second
	// MaxSourceSize caps a Hiera document; anything larger is a mistake
	// (or an attack) rather than data.
	MaxSourceSize = 16 << 20
)

// LoadSource returns the bytes of the Hiera document src names (docs/manifests.md,
// "Data"): a local path, a file:// path (CCM's CLI rejects it
// although its agent docs use it; we accept it) or an http(s):// URL.
// `user:pass@` in a URL becomes basic auth and is never echoed: every
// error names the URL with the password redacted. kv:// (NATS) sources
// are not built in and give an error saying so.
func LoadSource(ctx context.Context, src string) ([]byte, error) {
	switch {
	case src == "":
		return nil, errors.New("hiera source: empty; give a path, file:// path or http(s):// URL")
	case strings.HasPrefix(src, "http://"), strings.HasPrefix(src, "https://"):
		return fetch(ctx, src)
	case strings.HasPrefix(src, "kv://"):
		return nil, fmt.Errorf("hiera source %s: kv:// needs NATS, which this build does not include; use a path or an http(s):// URL", src)
	case strings.HasPrefix(src, "file://"):
		return readLocal(strings.TrimPrefix(src, "file://"))
	}
	return readLocal(src)
}

func readLocal(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("hiera source: %w; give an existing YAML/JSON file", err)
		}
		return nil, fmt.Errorf("hiera source: %w", err)
	}
	defer f.Close()
	return readCapped(f, path)
}

func fetch(ctx context.Context, src string) ([]byte, error) {
	u, err := url.Parse(src)
	if err != nil {
		// url.Parse's error quotes the whole URL, credentials included.
		return nil, errors.New("hiera source: invalid URL; check its syntax (scheme://[user:pass@]host/path)")
	}
	shown := u.Redacted()
	user := u.User
	u.User = nil // credentials travel in the header, so net/http errors cannot print them
	ctx, cancel := context.WithTimeout(ctx, SourceTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("hiera source %s: %w", shown, err)
	}
	if user != nil {
		pass, _ := user.Password()
		req.SetBasicAuth(user.Username(), pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hiera source %s: %w", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("hiera source %s: server answered %s; check the URL and credentials", shown, resp.Status)
	}
	return readCapped(resp.Body, shown)
}

// readCapped reads r whole unless it exceeds MaxSourceSize.
func readCapped(r io.Reader, name string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxSourceSize+1))
	if err != nil {
		return nil, fmt.Errorf("hiera source %s: read: %w", name, err)
	}
	if len(b) > MaxSourceSize {
		return nil, fmt.Errorf("hiera source %s: larger than %d bytes; a Hiera document should be small", name, MaxSourceSize)
	}
	return b, nil
}
