package source

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ccm-dev/ccm/internal/privatedir"
	"github.com/ccm-dev/ccm/runtime/bundle"
)

// The last-good cache (Options.LastGood) keeps, per source name, the last
// copy a fetch got and (for a bundle) verified: NAME-HASH.body, .sig and
// .json (what was kept, when, and the sha256 of each file, written last).
// When a later fetch of the name cannot reach its source, the kept copy is
// used instead; a bundle is verified again under the current policy and
// pin first. A source that answers with something that fails verification,
// or says the name does not exist, never falls back.

// Fallback says that a name was served from the last-good cache.
type Fallback struct {
	Name    string        `json:"name"`    // the source, password redacted
	Reason  string        `json:"reason"`  // why the source was not used
	Fetched time.Time     `json:"fetched"` // when the kept copy was fetched
	Age     time.Duration `json:"age_ns"`  // how old the kept copy was when used
	Digest  string        `json:"sha256"`  // sha256 of the kept copy
}

// unreachable marks a fetch error that means the source could not be
// reached or did not answer properly (network, timeout, 5xx, NATS down):
// the only errors that fall back to the last-good cache.
type unreachable struct{ err error }

func (e unreachable) Error() string { return e.err.Error() }
func (e unreachable) Unwrap() error { return e.err }

// IsUnreachable reports whether err says a source could not be reached.
func IsUnreachable(err error) bool {
	var u unreachable
	return errors.As(err, &u)
}

type keptMeta struct {
	Name    string    `json:"name"`
	Fetched time.Time `json:"fetched"`
	Body    string    `json:"body_sha256"`
	Sig     string    `json:"sig_sha256,omitempty"`
}

func (f *Fetcher) keptPath(name string) string {
	h := sha256.Sum256([]byte(name))
	return filepath.Join(f.opts.LastGood, hex.EncodeToString(h[:16]))
}

// keep records body (and sig, nil for none) as name's last-good copy.
// Failures are returned for the caller to report; they never fail a run.
func (f *Fetcher) keep(ref *Ref, name string, body, sig []byte) error {
	if f.opts.LastGood == "" {
		return nil
	}
	if err := privateDir(f.opts.LastGood); err != nil {
		return err
	}
	base := f.keptPath(name)
	m := keptMeta{Name: ref.String(), Fetched: f.now().UTC(), Body: bundle.Digest(body)}
	// The metadata goes last and names both files' digests, so a copy
	// torn by a crash is refused rather than used.
	if err := writeAtomic(base+".body", body); err != nil {
		return err
	}
	if sig != nil {
		m.Sig = bundle.Digest(sig)
		if err := writeAtomic(base+".sig", sig); err != nil {
			return err
		}
	}
	j, _ := json.Marshal(m)
	return writeAtomic(base+".json", j)
}

func writeAtomic(path string, b []byte) error {
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("last-good cache: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("last-good cache: %w", err)
	}
	return nil
}

// kept returns name's last-good copy, checked against the digests its
// metadata recorded.
func (f *Fetcher) kept(name string) (body, sig []byte, m keptMeta, err error) {
	if f.opts.LastGood == "" {
		return nil, nil, m, errors.New("no last-good cache configured")
	}
	// A kept copy others could have written is not trusted (data is not
	// signed), so the directory is checked on the way out too.
	if err := privateDir(f.opts.LastGood); err != nil {
		return nil, nil, m, err
	}
	base := f.keptPath(name)
	j, err := os.ReadFile(base + ".json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, m, errors.New("no last-good copy")
	}
	if err != nil {
		return nil, nil, m, err
	}
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, nil, m, fmt.Errorf("last-good copy %s.json: %w", base, err)
	}
	if body, err = os.ReadFile(base + ".body"); err != nil {
		return nil, nil, m, err
	}
	if bundle.Digest(body) != m.Body {
		return nil, nil, m, fmt.Errorf("last-good copy %s.body does not match its recorded sha256; refused", base)
	}
	if m.Sig != "" {
		if sig, err = os.ReadFile(base + ".sig"); err != nil {
			return nil, nil, m, err
		}
		if bundle.Digest(sig) != m.Sig {
			return nil, nil, m, fmt.Errorf("last-good copy %s.sig does not match its recorded sha256; refused", base)
		}
	}
	return body, sig, m, nil
}

func (f *Fetcher) now() time.Time {
	if f.opts.Now != nil {
		return f.opts.Now()
	}
	return time.Now()
}

func (f *Fetcher) fellBack(ref *Ref, reason error, m keptMeta) {
	fb := Fallback{Name: ref.String(), Reason: reason.Error(), Fetched: m.Fetched, Age: f.now().Sub(m.Fetched), Digest: m.Body}
	f.mu.Lock()
	f.fallbacks = append(f.fallbacks, fb)
	f.mu.Unlock()
}

// Fallbacks lists the names this Fetcher served from the last-good cache
// because their source was unreachable, in the order it happened.
func (f *Fetcher) Fallbacks() []Fallback {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Fallback(nil), f.fallbacks...)
}

// getOrKept is get plus the last-good cache for data (Get, KVGet).
func (f *Fetcher) getOrKept(ctx context.Context, ref *Ref, name string, max int64) ([]byte, error) {
	b, err := f.get(ctx, ref, max)
	if err == nil {
		if kerr := f.keep(ref, name, b, nil); kerr != nil {
			f.warn(kerr)
		}
		return b, nil
	}
	if !IsUnreachable(err) || f.opts.LastGood == "" {
		return nil, err
	}
	kb, _, m, kerr := f.kept(name)
	if kerr != nil {
		return nil, fmt.Errorf("%w (and no last-good copy to fall back to: %v)", err, kerr)
	}
	if int64(len(kb)) > max {
		return nil, fmt.Errorf("%w (the last-good copy is over the limit of %d bytes)", err, max)
	}
	f.fellBack(ref, err, m)
	return kb, nil
}

// keptBundle verifies name's last-good bundle under policy pol (the
// current trusted keys and pin) and extracts it; reason is the fetch error.
func (f *Fetcher) keptBundle(ref *Ref, name string, pol bundle.Policy, reason error) (*bundle.Extracted, error) {
	archive, sig, m, err := f.kept(name)
	if err != nil {
		return nil, fmt.Errorf("no last-good copy to fall back to: %v", err)
	}
	if _, err := pol.Check(archive, sig); err != nil {
		return nil, fmt.Errorf("the last-good copy (fetched %s) no longer verifies, so it is not used: %w", m.Fetched.Format(time.RFC3339), err)
	}
	x, err := bundle.Extract(archive, f.opts.Cache, f.opts.Limits)
	if err != nil {
		return nil, fmt.Errorf("the last-good copy: %w", err)
	}
	f.fellBack(ref, reason, m)
	return x, nil
}

func (f *Fetcher) warn(err error) {
	if f.opts.Warn != nil {
		f.opts.Warn(err)
	}
}

// privateDir makes dir mode 0700, or checks that an existing one is a
// directory only its owner (this user or root) may write to
// (internal/privatedir): a kept copy others could replace would be applied
// when the source is down (bundles are re-verified, data is not signed).
func privateDir(dir string) error {
	if err := privatedir.Ensure(dir, 0o700); err != nil {
		return fmt.Errorf("last-good cache %s is not a private directory: %w; use one only its owner may write to (mode 0700)", dir, err)
	}
	return nil
}
