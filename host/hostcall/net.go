package hostcall

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// The limits of one ccm_net_fetch (abi.NetFetchRequest); a request asks for
// less, never more.
const (
	netMaxBytes     = 1 << 30          // a body written to Dest
	netMaxInline    = 1 << 20          // a body returned in the response
	netTimeout      = 10 * time.Minute // the whole request, body included
	netMaxRedirects = 10
	netMaxHeaders   = 256 // answer header lines returned
)

// netFetch makes one HTTP(S) request for a plugin. The URL passes the one
// check (allowed: mode, the plugin's net capability, the grant chain) as
// "METHOD scheme://host:port"; so does every redirect before it is
// followed. A body for Dest streams into it through fileWrite, the code of
// ccm_fs_write (fs_write checked on Dest before the request is made), its
// sha256 computed on the way: an expected sum that differs or a body over
// the limit fails the write, so Dest is never replaced by a wrong file.
func netFetch(ctx context.Context, st *State, req abi.NetFetchRequest) (any, *abi.CallError) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if method != http.MethodGet && method != http.MethodHead {
		return nil, invalid("%s: method %q is not GET or HEAD", abi.CallNetFetch, req.Method)
	}
	u, err := url.Parse(req.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, invalid("%s: %q is not an absolute http or https URL", abi.CallNetFetch, redactURL(req.URL))
	}
	if u.User != nil {
		return nil, invalid("%s: %s carries credentials in the URL; pass them as username and password", abi.CallNetFetch, redact(u))
	}
	if cerr := allowed(st, access{call: abi.CallNetFetch, path: redact(u), target: trust.NetTarget(method, u)}); cerr != nil {
		return nil, cerr
	}
	headers, cerr := requestHeaders(req.Headers)
	if cerr != nil {
		return nil, cerr
	}
	maxBytes := int64(netMaxBytes)
	if req.Dest == "" {
		maxBytes = netMaxInline
	}
	if req.MaxBytes > 0 && req.MaxBytes < maxBytes {
		maxBytes = req.MaxBytes
	}
	var want []byte
	if req.SHA256 != "" {
		if want, err = hex.DecodeString(req.SHA256); err != nil || len(want) != sha256.Size {
			return nil, invalid("%s: sha256 %q is not 64 hex digits", abi.CallNetFetch, req.SHA256)
		}
	}
	var w *fileWrite
	if req.Dest != "" {
		mode := req.Mode
		if mode == 0 {
			mode = 0o644
		}
		if w, cerr = prepareWrite(st, abi.FSWriteRequest{Path: req.Dest, Mode: mode, Owner: req.Owner, Group: req.Group}); cerr != nil {
			return nil, cerr
		}
		defer w.close()
		if cerr := w.owners(st); cerr != nil {
			return nil, cerr
		}
	}

	timeout := netTimeout
	if req.TimeoutMS > 0 && time.Duration(req.TimeoutMS)*time.Millisecond < timeout {
		timeout = time.Duration(req.TimeoutMS) * time.Millisecond
	}
	if st.Runtime != nil {
		// Like an exec with a timeout: the transfer is bounded by its own
		// timeout, not by the plugin's call_timeout.
		st.Runtime.ExtendDeadline(timeout)
		start := time.Now()
		defer func() { st.Runtime.ExtendDeadline(time.Since(start) - timeout) }()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, invalid("%s: %v", abi.CallNetFetch, err)
	}
	hreq.Header = headers
	if req.Username != "" {
		hreq.SetBasicAuth(req.Username, req.Password)
	}
	client, refused := netClient(st, method, req.MaxRedirects)
	defer client.CloseIdleConnections()
	resp, err := client.Do(hreq)
	if err != nil {
		if *refused != nil {
			return nil, *refused
		}
		if ctx.Err() != nil {
			return nil, &abi.CallError{Code: abi.CodeTimeout, Message: fmt.Sprintf("%s %s: no answer within %s", method, redact(u), timeout)}
		}
		return nil, &abi.CallError{Code: abi.CodeIO, Message: fmt.Sprintf("%s %s: %v", method, redact(u), unwrapURLError(err))}
	}
	defer resp.Body.Close()
	out := abi.NetFetchResponse{Status: resp.StatusCode, URL: redact(resp.Request.URL), Headers: responseHeaders(resp.Header)}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || method == http.MethodHead {
		return out, nil // nothing read, nothing written
	}
	if resp.ContentLength > maxBytes {
		return nil, &abi.CallError{Code: abi.CodeTooLarge, Message: fmt.Sprintf("%s %s: the body of %d bytes exceeds the limit of %d", method, out.URL, resp.ContentLength, maxBytes)}
	}
	body := &checkedBody{r: resp.Body, h: sha256.New(), max: maxBytes, want: want, url: out.URL}
	if w == nil {
		data, err := io.ReadAll(body)
		if body.fail != nil {
			return nil, body.fail
		}
		if err != nil {
			return nil, transferError(ctx, method, out.URL, timeout, err)
		}
		out.Body, out.Size, out.SHA256 = data, body.n, hex.EncodeToString(body.h.Sum(nil))
		return out, nil
	}
	if cerr := w.commit(st, body); cerr != nil {
		if body.fail != nil {
			return nil, body.fail
		}
		if body.err != nil {
			return nil, transferError(ctx, method, out.URL, timeout, body.err)
		}
		return nil, cerr
	}
	out.Size, out.SHA256, out.Written = body.n, hex.EncodeToString(body.h.Sum(nil)), true
	return out, nil
}

// netClient is the client of one request: TLS verified against the
// system's roots (st.NetRoots in tests), proxies from the environment, and
// a CheckRedirect that puts every redirect through the one check before it
// is followed. A refused redirect is left in *refused.
func netClient(st *State, method string, maxRedirects int) (*http.Client, **abi.CallError) {
	if maxRedirects == 0 || maxRedirects > netMaxRedirects {
		maxRedirects = netMaxRedirects
	}
	var refused *abi.CallError
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		TLSClientConfig:        &tls.Config{RootCAs: st.NetRoots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    30 * time.Second,
		ResponseHeaderTimeout:  2 * time.Minute,
		MaxResponseHeaderBytes: 1 << 20,
		DisableKeepAlives:      true,
		ForceAttemptHTTP2:      true,
	}
	c := &http.Client{Transport: tr, CheckRedirect: func(next *http.Request, via []*http.Request) error {
		from := redact(via[len(via)-1].URL)
		if maxRedirects < 0 || len(via) > maxRedirects {
			refused = &abi.CallError{Code: abi.CodeDenied, Message: fmt.Sprintf("%s %s: redirect to %s refused: more than %d redirects", method, from, redact(next.URL), max(maxRedirects, 0))}
			return errors.New(refused.Message)
		}
		if next.URL.User != nil {
			refused = denied("%s %s: redirect to a URL with credentials refused", method, from)
			return errors.New(refused.Message)
		}
		if cerr := allowed(st, access{call: abi.CallNetFetch, path: redact(next.URL), target: trust.NetTarget(next.Method, next.URL)}); cerr != nil {
			refused = &abi.CallError{Code: cerr.Code, Message: "redirect from " + from + " refused: " + cerr.Message}
			return errors.New(refused.Message)
		}
		return nil
	}}
	return c, &refused
}

// checkedBody reads a body, counting and hashing it; past max bytes, or at
// its end with a sum other than want, it fails (fail set) instead of ending,
// so the write it feeds is abandoned.
type checkedBody struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	max  int64
	want []byte
	url  string
	fail *abi.CallError
	err  error // a transfer error of r
}

func (b *checkedBody) Read(p []byte) (int, error) {
	if b.fail != nil {
		return 0, errors.New(b.fail.Message)
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		b.fail = &abi.CallError{Code: abi.CodeTooLarge, Message: fmt.Sprintf("GET %s: the body exceeds the limit of %d bytes; nothing was written", b.url, b.max)}
		return 0, errors.New(b.fail.Message)
	}
	b.h.Write(p[:n])
	if errors.Is(err, io.EOF) && b.want != nil {
		if got := b.h.Sum(nil); !slices.Equal(got, b.want) {
			b.fail = &abi.CallError{Code: abi.CodeInvalid, Message: fmt.Sprintf("GET %s: sha256 %s differs from the expected %s; nothing was written", b.url, hex.EncodeToString(got), hex.EncodeToString(b.want))}
			return n, errors.New(b.fail.Message)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		b.err = err
	}
	return n, err
}

func transferError(ctx context.Context, method, u string, timeout time.Duration, err error) *abi.CallError {
	if ctx.Err() != nil {
		return &abi.CallError{Code: abi.CodeTimeout, Message: fmt.Sprintf("%s %s: not done within %s", method, u, timeout)}
	}
	return &abi.CallError{Code: abi.CodeIO, Message: fmt.Sprintf("%s %s: reading the body: %v", method, u, err)}
}

// requestHeaders parses "Name: value" lines.
func requestHeaders(lines []string) (http.Header, *abi.CallError) {
	h := http.Header{}
	for _, line := range lines {
		name, value, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n\x00") {
			return nil, invalid("%s: header %q is not a \"Name: value\" line", abi.CallNetFetch, name)
		}
		if strings.EqualFold(name, "Host") {
			return nil, invalid("%s: the Host header is the URL's; it cannot be set", abi.CallNetFetch)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// responseHeaders returns an answer's headers as sorted "Name: value" lines.
func responseHeaders(h http.Header) []string {
	var out []string
	for name, values := range h {
		for _, v := range values {
			out = append(out, name+": "+v)
		}
	}
	slices.Sort(out)
	if len(out) > netMaxHeaders {
		out = out[:netMaxHeaders]
	}
	return out
}

// redact writes u without credentials or query (which may hold a token).
func redact(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment = nil, "", false, ""
	return c.String()
}

func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return redact(u)
	}
	return strconv.Quote(s)
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
