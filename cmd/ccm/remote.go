package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/ccm-dev/ccm/runtime/data"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/spf13/pflag"
)

// remoteOptions are the flags of remote sources (docs/remote.md).
type remoteOptions struct {
	context     string
	sha256      string
	trustedKeys string
}

func (r *remoteOptions) addFlags(f *pflag.FlagSet, pin bool) {
	f.StringVar(&r.context, "context", "", "NATS context `NAME` or absolute path of a context file, for obj:// and kv:// (default $NATS_CONTEXT, else CCM)")
	if pin {
		f.StringVar(&r.sha256, "sha256", "", "pin a remote MANIFEST bundle to this sha256 `HEX`; any other bundle is refused")
	}
	f.StringVar(&r.trustedKeys, "trusted-keys", os.Getenv("CCM_TRUSTED_KEYS"), "`FILE` of signer public keys (nkeys, one a line): every remote bundle must be signed by one of them (default $CCM_TRUSTED_KEYS)")
}

// fetcher builds the run's Fetcher.
func (r *remoteOptions) fetcher() (*source.Fetcher, error) {
	opts := source.Options{Context: r.context, Cache: bundleCache()}
	if opts.Cache == "" {
		return nil, fmt.Errorf("bundle cache: no location; set CCM_BUNDLE_CACHE")
	}
	if r.trustedKeys != "" {
		keys, err := bundle.LoadTrusted(r.trustedKeys)
		if err != nil {
			return nil, err
		}
		opts.Policy = bundle.Policy{Trusted: keys, RequireSignature: true}
	}
	return source.New(opts), nil
}

// remoteHook is engine.Options.Remote: the naming scope's net grant must
// allow the source's host or bucket.
func remoteHook(f *source.Fetcher) func(ctx context.Context, name, pin string, grants trust.Chain) (string, string, error) {
	return func(ctx context.Context, name, pin string, grants trust.Chain) (string, string, error) {
		ref, err := source.Parse(name)
		if err != nil {
			return "", "", fmt.Errorf("bundle %v", err)
		}
		if t := ref.NetTarget(); !grants.Allows(trust.Net, t) {
			return "", "", fmt.Errorf("bundle %s: refused: the scope's grants do not allow net %q; add it to the apply's grants (net: [%q])", ref, t, t)
		}
		x, err := f.Bundle(ctx, name, pin)
		if err != nil {
			return "", "", err
		}
		return x.Manifest, x.Root, nil
	}
}

// loadHieraSource is data.LoadSource plus kv://BUCKET/KEY through NATS.
func loadHieraSource(ctx context.Context, src string, f *source.Fetcher) ([]byte, error) {
	if strings.HasPrefix(src, "kv://") {
		b, err := f.Get(ctx, src, data.MaxSourceSize)
		if err != nil {
			return nil, fmt.Errorf("hiera source %w", err)
		}
		return b, nil
	}
	return data.LoadSource(ctx, src)
}

// bundleCache is where bundles are extracted: $CCM_BUNDLE_CACHE, else
// bundles/ under $CCM_CACHE_DIR, /var/cache/ccm as root, or the user's
// cache directory.
func bundleCache() string {
	if d := os.Getenv("CCM_BUNDLE_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("CCM_CACHE_DIR"); d != "" {
		return filepath.Join(d, "bundles")
	}
	if os.Geteuid() == 0 {
		return "/var/cache/ccm/bundles"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ccm", "bundles")
	}
	return ""
}

// kvGetHook is engine.Options.KVGet: the scope's net grant must allow
// nats:kv/BUCKET.
func kvGetHook(f *source.Fetcher) func(ctx context.Context, bucket, key string, grants trust.Chain) (string, error) {
	return func(ctx context.Context, bucket, key string, grants trust.Chain) (string, error) {
		if t := "nats:kv/" + bucket; !grants.Allows(trust.Net, t) {
			return "", fmt.Errorf("refused: the scope's grants do not allow net %q; add it to the apply's grants (net: [%q])", t, t)
		}
		return f.KVGet(ctx, bucket, key)
	}
}
