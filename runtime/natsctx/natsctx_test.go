package natsctx

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/natstest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
)

// saveContext writes NAME.json under a fresh XDG_CONFIG_HOME.
func saveContext(t *testing.T, name string, c map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("NATS_CONTEXT", "")
	t.Setenv("NATS_URL", "")
	p := filepath.Join(dir, "nats", "context", name+".json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	b, _ := json.Marshal(c)
	os.WriteFile(p, b, 0o600)
	return p
}

// check connects with the named context and uses JetStream.
func check(t *testing.T, name string) error {
	t.Helper()
	c, err := Resolve(name)
	if err != nil {
		return err
	}
	nc, js, err := c.Connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err
}

func TestUserPassword(t *testing.T) {
	url := natstest.StartWith(t, func(o *server.Options) { o.Username, o.Password = "ccm", "pw" })
	saveContext(t, "CCM", map[string]any{"url": url, "user": "ccm", "password": "pw"})
	if err := check(t, ""); err != nil {
		t.Fatal(err)
	}
	saveContext(t, "CCM", map[string]any{"url": url, "user": "ccm", "password": "nope"})
	if err := check(t, ""); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		t.Fatalf("wrong password: %v", err)
	}
}

func TestNKey(t *testing.T) {
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	url := natstest.StartWith(t, func(o *server.Options) { o.Nkeys = []*server.NkeyUser{{Nkey: pub}} })
	seedFile := filepath.Join(t.TempDir(), "user.nk")
	os.WriteFile(seedFile, seed, 0o600)
	saveContext(t, "nk", map[string]any{"url": url, "nkey": seedFile})
	if err := check(t, "nk"); err != nil {
		t.Fatal(err)
	}
	saveContext(t, "nk", map[string]any{"url": url})
	if err := check(t, "nk"); err == nil {
		t.Fatal("connected without the nkey")
	}
}

func TestJetStreamDomainAndInboxPrefix(t *testing.T) {
	url := natstest.StartWith(t, func(o *server.Options) { o.JetStreamDomain = "hub" })
	saveContext(t, "CCM", map[string]any{"url": url, "jetstream_domain": "hub", "inbox_prefix": "_INBOX_ccm"})
	if err := check(t, ""); err != nil {
		t.Fatal(err)
	}
	saveContext(t, "CCM", map[string]any{"url": url, "jetstream_domain": "elsewhere"})
	if err := check(t, ""); err == nil {
		t.Fatal("JetStream answered in another domain")
	}
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := selfSigned(t, dir)
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	url := natstest.StartWith(t, func(o *server.Options) {
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
		o.TLS = true
	})
	url = strings.Replace(url, "nats://", "tls://", 1)
	saveContext(t, "CCM", map[string]any{"url": url, "ca": ca})
	if err := check(t, ""); err != nil {
		t.Fatal(err)
	}
	saveContext(t, "CCM", map[string]any{"url": url})
	if err := check(t, ""); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted server certificate: %v", err)
	}
}

func TestResolve(t *testing.T) {
	saveContext(t, "CCM", map[string]any{"url": "nats://a:4222"})
	for _, tc := range []struct{ name, env, want string }{
		{"", "", "nats://a:4222"},
		{"CCM", "", "nats://a:4222"},
	} {
		t.Setenv("NATS_CONTEXT", tc.env)
		c, err := Resolve(tc.name)
		if err != nil || c.URL != tc.want {
			t.Errorf("%+v: %+v %v", tc, c, err)
		}
	}
	// The default context may be absent: $NATS_URL, else localhost.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if c, err := Resolve(""); err != nil || c.URL != "nats://127.0.0.1:4222" || c.Source != "" {
		t.Fatalf("absent default: %+v %v", c, err)
	}
	t.Setenv("NATS_URL", "nats://b:4222")
	if c, _ := Resolve(""); c.URL != "nats://b:4222" {
		t.Fatalf("NATS_URL: %+v", c)
	}
	// A named one may not.
	if _, err := Resolve("prod"); err == nil || !strings.Contains(err.Error(), `nats context "prod"`) {
		t.Fatalf("absent named: %v", err)
	}
	t.Setenv("NATS_CONTEXT", "prod")
	if _, err := Resolve(""); err == nil {
		t.Fatal("absent $NATS_CONTEXT accepted")
	}
	if _, err := Resolve("../../etc/x"); err == nil || !strings.Contains(err.Error(), "path separator") {
		t.Fatalf("relative path: %v", err)
	}
	if got := redact("nats://u:p@h:4222,nats://h2:4222"); got != "nats://REDACTED@h:4222,nats://h2:4222" {
		t.Fatalf("redact: %s", got)
	}
}

// selfSigned writes a CA-less self-signed certificate for 127.0.0.1 and
// returns (ca, cert, key) paths (the certificate is its own CA).
func selfSigned(t *testing.T, dir string) (string, string, string) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return cert, cert, key
}
