package bundle

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/nats-io/nkeys"
)

// A signature is a small detached text file (BUNDLE.sig beside the bundle,
// KEY.sig in an object store bucket):
//
//	ccm-bundle-signature v1
//	key: UD...            (the signer's nkeys public key)
//	sha256: 3b1f...       (the bundle's digest)
//	signature: ...        (base64url ed25519 signature of the message below)
//
// The signed message is "ccm-bundle-signature v1\nsha256:HEX\n": the
// digest of the exact tarball bytes under a fixed prefix, so a bundle
// signature cannot be replayed as any other nkeys signature (a NATS
// nonce, say).
const sigHeader = "ccm-bundle-signature v1"

// SigSuffix is appended to a bundle's name to find its signature.
const SigSuffix = ".sig"

func message(digest string) []byte {
	return []byte(sigHeader + "\nsha256:" + digest + "\n")
}

// Sign signs archive with the nkeys seed (a user, account or operator seed,
// "SU…", "SA…", "SO…") and returns the signature file.
func Sign(archive, seed []byte) ([]byte, error) {
	kp, err := nkeys.FromSeed(bytes.TrimSpace(seed))
	if err != nil {
		return nil, fmt.Errorf("signing key: %w; give an nkeys seed (ccm bundle keygen makes one)", err)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, err
	}
	d := Digest(archive)
	sig, err := kp.Sign(message(d))
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "%s\nkey: %s\nsha256: %s\nsignature: %s\n", sigHeader, pub, d, base64.RawURLEncoding.EncodeToString(sig)), nil
}

// Keygen returns a new user nkeys seed and its public key.
func Keygen() (seed []byte, pub string, err error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, "", err
	}
	seed, err = kp.Seed()
	if err != nil {
		return nil, "", err
	}
	pub, err = kp.PublicKey()
	return seed, pub, err
}

// Signature is a parsed signature file.
type Signature struct {
	Key, SHA256 string
	Sig         []byte
}

// ParseSignature reads a signature file.
func ParseSignature(b []byte) (*Signature, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != sigHeader {
		return nil, fmt.Errorf("not a ccm bundle signature (first line must be %q)", sigHeader)
	}
	s := &Signature{}
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch strings.TrimSpace(k) {
		case "key":
			s.Key = v
		case "sha256":
			s.SHA256 = strings.ToLower(v)
		case "signature":
			sig, err := base64.RawURLEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("signature: %w", err)
			}
			s.Sig = sig
		}
	}
	if s.Key == "" || s.SHA256 == "" || s.Sig == nil {
		return nil, errors.New("signature file lacks key, sha256 or signature")
	}
	return s, nil
}

// Policy is what an operator requires of a bundle before it is extracted.
type Policy struct {
	// SHA256 pins the tarball's digest (hex); "" pins nothing.
	SHA256 string
	// Trusted lists the signer public keys accepted; RequireSignature
	// refuses a bundle without a valid signature by one of them.
	Trusted          []string
	RequireSignature bool
}

var hexPin = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ParsePin normalises a sha256 pin: 64 hex digits, optionally "sha256:"
// first.
func ParsePin(s string) (string, error) {
	p := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "sha256:"))
	if !hexPin.MatchString(p) {
		return "", fmt.Errorf("sha256 pin %q is not 64 hexadecimal digits", s)
	}
	return p, nil
}

// Check verifies archive against the policy; sig is its signature file,
// nil when there is none. The error says which check failed.
func (p Policy) Check(archive, sig []byte) (signer string, err error) {
	d := Digest(archive)
	if p.SHA256 != "" && d != p.SHA256 {
		return "", fmt.Errorf("sha256 is %s, but the pin says %s: the bundle is not the one pinned (tampered or republished)", d, p.SHA256)
	}
	if sig == nil {
		if p.RequireSignature {
			return "", errors.New("unsigned: no signature found, and signatures are required (trusted keys are configured)")
		}
		return "", nil
	}
	s, err := ParseSignature(sig)
	if err != nil {
		if p.RequireSignature {
			return "", fmt.Errorf("bad signature file: %w", err)
		}
		return "", nil
	}
	if !p.RequireSignature && len(p.Trusted) == 0 {
		return "", nil // nothing to check it against
	}
	if !trusted(p.Trusted, s.Key) {
		return "", fmt.Errorf("signed by %s, which is not in the trusted keys", s.Key)
	}
	if s.SHA256 != d {
		return "", fmt.Errorf("the signature is for sha256 %s, but the bundle's is %s: tampered or not the bundle signed", s.SHA256, d)
	}
	kp, err := nkeys.FromPublicKey(s.Key)
	if err != nil {
		return "", fmt.Errorf("signature key %s: %w", s.Key, err)
	}
	if err := kp.Verify(message(d), s.Sig); err != nil {
		return "", fmt.Errorf("signature by %s does not verify: %w", s.Key, err)
	}
	return s.Key, nil
}

func trusted(keys []string, k string) bool {
	for _, t := range keys {
		if t == k {
			return true
		}
	}
	return false
}

// LoadTrusted reads a trust file: one nkeys public key per line, the rest
// of a line after the key and lines starting with # are comments.
func LoadTrusted(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("trusted keys: %w", err)
	}
	var keys []string
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if _, err := nkeys.FromPublicKey(f[0]); err != nil {
			return nil, fmt.Errorf("trusted keys %s:%d: %q is not an nkeys public key: %w", path, i+1, f[0], err)
		}
		keys = append(keys, f[0])
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("trusted keys %s: no keys; a trust file lists one signer public key per line", path)
	}
	return keys, nil
}
