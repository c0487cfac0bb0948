package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// HTTPWatch notices when an http(s) source changes, with conditional GETs:
// the validators of the last answer (ETag, Last-Modified) go back as
// If-None-Match and If-Modified-Since, so an unchanged source costs a 304
// and no body. A server that sends neither validator has its body hashed.
type HTTPWatch struct {
	f   *Fetcher
	ref *Ref

	etag, modified string
	id             string // what the source was last seen as
	known          bool   // id was seen at least once
	missed         bool   // a poll failed before anything was seen
}

// WatchHTTP returns a watch of the http(s) source name. Its first Poll
// sees the source as it is; later ones say whether it changed since.
func (f *Fetcher) WatchHTTP(name string) (*HTTPWatch, error) {
	ref, err := Parse(name)
	if err != nil {
		return nil, err
	}
	if ref.Scheme != "https" && ref.Scheme != "http" {
		return nil, fmt.Errorf("%s: only http(s) sources are polled", ref)
	}
	return &HTTPWatch{f: f, ref: ref}, nil
}

// Poll asks the source whether it changed since the last successful Poll.
// The first successful Poll reports a change only when an earlier one
// failed (the source came back: whatever was applied meanwhile came from
// the last-good cache, or nothing was).
func (w *HTTPWatch) Poll(ctx context.Context) (changed bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, w.f.opts.Timeout)
	defer cancel()
	u := *w.ref.URL
	user := u.User
	u.User = nil
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false, err
	}
	if user != nil {
		pass, _ := user.Password()
		req.SetBasicAuth(user.Username(), pass)
	}
	if w.etag != "" {
		req.Header.Set("If-None-Match", w.etag)
	}
	if w.modified != "" {
		req.Header.Set("If-Modified-Since", w.modified)
	}
	resp, err := w.f.opts.HTTPClient.Do(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return false, w.failed(err)
	}
	defer resp.Body.Close()
	var id string
	switch {
	case resp.StatusCode == http.StatusNotModified && w.known:
		return false, nil
	case resp.StatusCode != http.StatusOK:
		return false, w.failed(fmt.Errorf("server answered %s", resp.Status))
	case resp.Header.Get("ETag") != "" || resp.Header.Get("Last-Modified") != "":
		id = "etag " + resp.Header.Get("ETag") + " modified " + resp.Header.Get("Last-Modified")
	default:
		h := sha256.New()
		if _, err := io.Copy(h, io.LimitReader(resp.Body, w.f.opts.Limits.MaxArchive+1)); err != nil {
			return false, w.failed(err)
		}
		id = "sha256 " + hex.EncodeToString(h.Sum(nil))
	}
	w.etag, w.modified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	changed = (w.known && id != w.id) || (!w.known && w.missed)
	w.id, w.known, w.missed = id, true, false
	return changed, nil
}

func (w *HTTPWatch) failed(err error) error {
	if !w.known {
		w.missed = true
	}
	return fmt.Errorf("polling %s: %w", w.ref, err)
}

// String is the watched source, password redacted.
func (w *HTTPWatch) String() string { return w.ref.String() }
