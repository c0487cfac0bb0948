// Package source fetches remote manifest bundles and data: https:// URLs
// and NATS JetStream object store (obj://BUCKET/KEY) and key-value
// (kv://BUCKET/KEY) names, CCM's spellings (docs/remote.md).
//
// A Fetcher belongs to one run. It fetches each bundle name once,
// verifies it against the run's policy (runtime/bundle) before it is
// extracted, and hands every later use of the same name the same
// extracted tree: an object replaced on the server during the run changes
// nothing in it.
package source

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/ccm-dev/ccm/runtime/natsctx"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Ref is a parsed remote name.
type Ref struct {
	Scheme string // "https", "http", "obj" or "kv"
	URL    *url.URL
	Bucket string // obj, kv
	Key    string // obj, kv
}

// IsRemote reports whether name is a remote source (has a scheme ccm
// fetches) rather than a local path.
func IsRemote(name string) bool {
	for _, p := range []string{"https://", "http://", "obj://", "kv://"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Parse parses a remote name.
func Parse(name string) (*Ref, error) {
	u, err := url.Parse(name)
	if err != nil {
		// url.Parse's error quotes the whole URL, credentials included.
		return nil, errors.New("invalid URL; check its syntax (scheme://[user:pass@]host/path)")
	}
	r := &Ref{Scheme: u.Scheme, URL: u}
	switch u.Scheme {
	case "https", "http":
		if u.Host == "" {
			return nil, fmt.Errorf("%s: no host", u.Redacted())
		}
	case "obj", "kv":
		// CCM: host is the bucket, the path less its leading / the key.
		r.Bucket, r.Key = u.Host, strings.TrimPrefix(u.Path, "/")
		if r.Bucket == "" || r.Key == "" {
			return nil, fmt.Errorf("%s: want %s://BUCKET/KEY", name, u.Scheme)
		}
	default:
		return nil, fmt.Errorf("%s: unsupported scheme %q; use https://, obj:// or kv://", u.Redacted(), u.Scheme)
	}
	return r, nil
}

// String is the name with any password redacted.
func (r *Ref) String() string { return r.URL.Redacted() }

// NetTarget is what a scope's net grant must allow for r: "host:port"
// for http(s), "nats:obj/BUCKET" or "nats:kv/BUCKET" for NATS (a grant
// entry "nats" allows every bucket).
func (r *Ref) NetTarget() string {
	switch r.Scheme {
	case "obj", "kv":
		return "nats:" + r.Scheme + "/" + r.Bucket
	}
	port := r.URL.Port()
	if port == "" {
		port = "443"
		if r.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(r.URL.Hostname(), port)
}

// Options configure a Fetcher.
type Options struct {
	Context string        // NATS context (natsctx.Resolve)
	Cache   string        // bundle cache directory
	Limits  bundle.Limits // zero: bundle.DefaultLimits
	Policy  bundle.Policy // run-wide: trusted keys, required signatures (SHA256 ignored)
	Timeout time.Duration // one fetch; zero: DefaultTimeout
	// HTTPClient is used for http(s); nil: a client with bounded
	// redirects. Tests pass one trusting their TLS server.
	HTTPClient *http.Client

	// LastGood, when set, is the last-good cache directory (lastgood.go):
	// a source that cannot be reached is served from there, a bundle
	// re-verified under Policy and its pin first. Fallbacks lists them.
	LastGood string
	// Now is the clock for the last-good cache; nil: time.Now.
	Now func() time.Time
	// Warn receives problems that do not fail a fetch (a copy that could
	// not be kept); nil: dropped.
	Warn func(error)
}

// DefaultTimeout bounds one fetch (connect, request and body).
const DefaultTimeout = 30 * time.Second

// MaxRedirects bounds the redirects an https fetch follows.
const MaxRedirects = 5

// Fetcher fetches for one run; safe for concurrent use.
type Fetcher struct {
	opts Options

	mu      sync.Mutex
	nc      *nats.Conn
	js      jetstream.JetStream
	bundles map[string]*bundle.Extracted

	fallbacks []Fallback
}

// New returns a Fetcher.
func New(opts Options) *Fetcher {
	if opts.Limits == (bundle.Limits{}) {
		opts.Limits = bundle.DefaultLimits
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	c := *opts.HTTPClient
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= MaxRedirects {
			return fmt.Errorf("more than %d redirects", MaxRedirects)
		}
		if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
			return errors.New("redirect from https to " + req.URL.Scheme + " refused")
		}
		return nil
	}
	opts.HTTPClient = &c
	return &Fetcher{opts: opts, bundles: map[string]*bundle.Extracted{}}
}

// Close closes the NATS connection, if one was made.
func (f *Fetcher) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.nc != nil {
		f.nc.Close()
		f.nc, f.js = nil, nil
	}
}

// Bundle fetches, verifies and extracts the bundle name names; pin is a
// sha256 pin ("" for none). The second and later calls for one name
// return the first result (after checking its pin).
func (f *Fetcher) Bundle(ctx context.Context, name, pin string) (*bundle.Extracted, error) {
	ref, err := Parse(name)
	if err != nil {
		return nil, fmt.Errorf("bundle %s", err)
	}
	if ref.Scheme == "kv" {
		return nil, fmt.Errorf("bundle %s: a bundle comes from https:// or obj://; kv:// holds data (--hiera, kvGet)", ref)
	}
	if pin != "" {
		if pin, err = bundle.ParsePin(pin); err != nil {
			return nil, fmt.Errorf("bundle %s: %w", ref, err)
		}
	}
	f.mu.Lock()
	x, ok := f.bundles[name]
	f.mu.Unlock()
	if ok {
		if pin != "" && x.Digest != pin {
			return nil, fmt.Errorf("bundle %s: sha256 is %s, but the pin says %s", ref, x.Digest, pin)
		}
		return x, nil
	}
	pol := f.opts.Policy
	pol.SHA256 = pin
	archive, err := f.get(ctx, ref, f.opts.Limits.MaxArchive)
	var sig []byte
	if err == nil && (pol.RequireSignature || len(pol.Trusted) > 0) {
		if sig, err = f.signature(ctx, ref); err != nil {
			err = fmt.Errorf("signature: %w", err)
		}
	}
	if err != nil {
		if !IsUnreachable(err) || f.opts.LastGood == "" {
			return nil, fmt.Errorf("bundle %s: %w", ref, err)
		}
		x, kerr := f.keptBundle(ref, name, pol, err)
		if kerr != nil {
			return nil, fmt.Errorf("bundle %s: %w; %v", ref, err, kerr)
		}
		return f.remember(name, x), nil
	}
	if _, err := pol.Check(archive, sig); err != nil {
		return nil, fmt.Errorf("bundle %s: %w", ref, err)
	}
	x, err = bundle.Extract(archive, f.opts.Cache, f.opts.Limits)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", ref, err)
	}
	if kerr := f.keep(ref, name, archive, sig); kerr != nil {
		f.warn(kerr)
	}
	return f.remember(name, x), nil
}

func (f *Fetcher) remember(name string, x *bundle.Extracted) *bundle.Extracted {
	f.mu.Lock()
	defer f.mu.Unlock()
	if prev, ok := f.bundles[name]; ok { // fetched concurrently
		return prev
	}
	f.bundles[name] = x
	return x
}

// signature fetches the detached signature of ref; nil when there is
// none.
func (f *Fetcher) signature(ctx context.Context, ref *Ref) ([]byte, error) {
	sref := *ref
	u := *ref.URL
	sref.URL = &u
	if ref.Scheme == "obj" {
		sref.Key += bundle.SigSuffix
		u.Path += bundle.SigSuffix
	} else {
		u.Path += bundle.SigSuffix
		u.RawPath = ""
	}
	b, err := f.get(ctx, &sref, 64<<10)
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	return b, err
}

var errNotFound = errors.New("not found")

// notFound is an error saying what was not found that Is errNotFound.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == errNotFound }

// Get returns the bytes name names (an https URL, obj:// or kv://), at
// most max.
func (f *Fetcher) Get(ctx context.Context, name string, max int64) ([]byte, error) {
	ref, err := Parse(name)
	if err != nil {
		return nil, err
	}
	b, err := f.getOrKept(ctx, ref, name, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return b, nil
}

func (f *Fetcher) get(ctx context.Context, ref *Ref, max int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	var b []byte
	var err error
	switch ref.Scheme {
	case "https", "http":
		b, err = f.getHTTP(ctx, ref, max)
	case "obj":
		b, err = f.getObject(ctx, ref, max)
	case "kv":
		b, err = f.getKV(ctx, ref, max)
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, errNotFound) {
		return nil, unreachable{fmt.Errorf("no answer within %s: %w", f.opts.Timeout, err)}
	}
	return b, err
}

func (f *Fetcher) getHTTP(ctx context.Context, ref *Ref, max int64) ([]byte, error) {
	u := *ref.URL
	user := u.User
	u.User = nil // credentials travel in the header, so errors cannot print them
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if user != nil {
		pass, _ := user.Password()
		req.SetBasicAuth(user.Username(), pass)
	}
	resp, err := f.opts.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if strings.Contains(err.Error(), "redirect") {
			return nil, err // a refused redirect: the server answered
		}
		return nil, unreachable{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, notFound("server answered " + resp.Status)
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout {
		return nil, unreachable{fmt.Errorf("server answered %s", resp.Status)}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("server answered %s; check the URL and credentials", resp.Status)
	}
	b, err := readMax(resp.Body, max)
	if err != nil && !strings.Contains(err.Error(), "refused") {
		return nil, unreachable{err} // the body broke off
	}
	return b, err
}

func readMax(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %d bytes; refused", max)
	}
	return b, nil
}

// jetStream connects once per Fetcher.
func (f *Fetcher) jetStream() (jetstream.JetStream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.js != nil {
		return f.js, nil
	}
	c, err := natsctx.Resolve(f.opts.Context)
	if err != nil {
		return nil, err
	}
	c.Timeout = min(f.opts.Timeout, 5*time.Second)
	nc, js, err := c.Connect()
	if err != nil {
		return nil, unreachable{err}
	}
	f.nc, f.js = nc, js
	// The connection serves one run: when it drops, close it, so that a
	// request in flight fails now rather than at the fetch timeout (an
	// agent runs again once the server is back: agent.CatchUp).
	nc.SetDisconnectErrHandler(func(c *nats.Conn, _ error) { c.Close() })
	return js, nil
}

func (f *Fetcher) getObject(ctx context.Context, ref *Ref, max int64) ([]byte, error) {
	js, err := f.jetStream()
	if err != nil {
		return nil, err
	}
	os, err := js.ObjectStore(ctx, ref.Bucket)
	if err != nil {
		return nil, natsErr(fmt.Errorf("object store bucket %q: %w", ref.Bucket, err))
	}
	info, err := os.GetInfo(ctx, ref.Key)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, notFound(fmt.Sprintf("no object %q in bucket %q", ref.Key, ref.Bucket))
	}
	if err != nil {
		return nil, natsErr(fmt.Errorf("object %q in bucket %q: %w", ref.Key, ref.Bucket, err))
	}
	if int64(info.Size) > max {
		return nil, fmt.Errorf("object is %d bytes, over the limit of %d", info.Size, max)
	}
	r, err := os.Get(ctx, ref.Key)
	if err != nil {
		return nil, natsErr(fmt.Errorf("object %q in bucket %q: %w", ref.Key, ref.Bucket, err))
	}
	defer r.Close()
	// The object store checks its own digest at the end of the read.
	b, err := readMax(r, max)
	if err != nil {
		return nil, natsErr(err)
	}
	return b, nil
}

func (f *Fetcher) getKV(ctx context.Context, ref *Ref, max int64) ([]byte, error) {
	js, err := f.jetStream()
	if err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, ref.Bucket)
	if err != nil {
		return nil, natsErr(fmt.Errorf("could not access KV bucket %q: %w", ref.Bucket, err))
	}
	e, err := kv.Get(ctx, ref.Key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, notFound(fmt.Sprintf("could not get key %q from bucket %q: no such key", ref.Key, ref.Bucket))
	}
	if err != nil {
		return nil, natsErr(fmt.Errorf("could not get key %q from bucket %q: %w", ref.Key, ref.Bucket, err))
	}
	if int64(len(e.Value())) > max {
		return nil, fmt.Errorf("value is %d bytes, over the limit of %d", len(e.Value()), max)
	}
	return e.Value(), nil
}

// natsErr marks err unreachable unless the server answered: a missing
// bucket, an object that fails its digest, or one over the size limit.
func natsErr(err error) error {
	if errors.Is(err, jetstream.ErrBucketNotFound) || errors.Is(err, jetstream.ErrDigestMismatch) || strings.Contains(err.Error(), "refused") {
		return err
	}
	return unreachable{err}
}

// KVGet is kvGet(bucket, key) of templates: the value as a string; a
// missing key is an error, as in CCM.
func (f *Fetcher) KVGet(ctx context.Context, bucket, key string) (string, error) {
	if bucket == "" {
		return "", errors.New("bucket name is required")
	}
	if key == "" {
		return "", errors.New("key is required")
	}
	ref := &Ref{Scheme: "kv", Bucket: bucket, Key: key, URL: &url.URL{Scheme: "kv", Host: bucket, Path: "/" + key}}
	b, err := f.getOrKept(ctx, ref, ref.URL.String(), 1<<20)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
