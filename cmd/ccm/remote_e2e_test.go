package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/natstest"
	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/bundle"
	"github.com/ccm-dev/ccm/runtime/session"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// remoteEnv starts a nats-server, writes the default CCM context for it
// and returns the environment a ccm process needs (context, private
// bundle cache) and a JetStream handle for the test.
func remoteEnv(t *testing.T) ([]string, jetstream.JetStream, string) {
	t.Helper()
	url := natstest.Start(t, "")
	cfg := t.TempDir()
	os.MkdirAll(filepath.Join(cfg, "nats", "context"), 0o755)
	b, _ := json.Marshal(map[string]string{"url": url})
	os.WriteFile(filepath.Join(cfg, "nats", "context", "CCM.json"), b, 0o600)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	return []string{"XDG_CONFIG_HOME=" + cfg, "CCM_BUNDLE_CACHE=" + t.TempDir()}, js, url
}

// vendorBundle writes a vendor's bundle directory: its manifest writes
// OUT/vendor and applies sub/child.yaml (inside the bundle), which writes
// OUT/child. It returns the directory.
func vendorBundle(t *testing.T, out, tag string) string {
	t.Helper()
	dir := t.TempDir()
	writeManifest(t, dir, "manifest.yaml", `
data:
  who: vendor
ccm:
  resources:
    - file:
        - `+out+`/vendor: {content: "`+tag+`", owner: "@USER@", group: "@GROUP@", mode: "0644"}
        - `+out+`/tpl: {content: "{{ readFile('files/motd.txt') }}", owner: "@USER@", group: "@GROUP@", mode: "0644"}
    - apply:
        - sub/child.yaml: {data: {who: "{{ Data.who }}"}}
`)
	writeManifest(t, dir, "sub/child.yaml", `
ccm:
  resources:
    - file:
        - `+out+`/child: {content: "child {{ Data.who }}", owner: "@USER@", group: "@GROUP@", mode: "0644"}
`)
	writeManifest(t, dir, "files/motd.txt", "from the bundle")
	return dir
}

func ccmOK(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	res := ccmtest.Run(t, dir, env, args...)
	if res.Code != 0 {
		t.Fatalf("ccm %s: exit %d\n%s%s", strings.Join(args, " "), res.Code, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// TestRemoteBundleObjectStore is the walk-through of docs/remote.md: a
// vendor packs, signs and publishes a bundle to a NATS object store; the
// operator applies it confined, pinned and signature-checked, from the CLI
// and as an apply resource; and every way of getting it wrong stops the
// run at load, naming the source and the reason, with nothing applied.
func TestRemoteBundleObjectStore(t *testing.T) {
	env, js, _ := remoteEnv(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	src := vendorBundle(t, out, "v1")

	pub := strings.TrimSpace(ccmOK(t, work, env, "bundle", "keygen", "--out", "vendor.nk"))
	os.WriteFile(filepath.Join(work, "trusted.keys"), []byte("# acme\n"+pub+" acme\n"), 0o644)
	packed := ccmOK(t, work, env, "bundle", "pack", src, "--out", "site.tar.gz")
	archive, _ := os.ReadFile(filepath.Join(work, "site.tar.gz"))
	digest := bundle.Digest(archive)
	if !strings.Contains(packed, "sha256:"+digest) {
		t.Fatalf("pack printed %q, want the digest %s", packed, digest)
	}
	ccmOK(t, work, env, "bundle", "sign", "site.tar.gz", "--key", "vendor.nk")
	if v := ccmOK(t, work, env, "bundle", "verify", "site.tar.gz", "--trusted-keys", "trusted.keys", "--sha256", digest); !strings.Contains(v, "signed by "+pub) {
		t.Fatalf("verify: %s", v)
	}
	ccmOK(t, work, env, "bundle", "publish", "site.tar.gz", "obj://VENDOR/site.tar.gz")

	// The operator's manifest: the vendor's bundle, confined to OUT and
	// pinned; data passed in.
	writeManifest(t, work, "site.yaml", `
ccm:
  resources:
    - apply:
        - obj://VENDOR/site.tar.gz:
            sha256: "`+digest+`"
            allow_apply: true
            data: {who: operator}
            grants: {fs_read: ["`+out+`/**"], fs_write: ["`+out+`/**"], users: true}
`)
	o, res := applyJSONEnv(t, work, append(env, "CCM_TRUSTED_KEYS=trusted.keys"), "site.yaml")
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if e := o.event(t, "apply#obj://VENDOR/site.tar.gz"); e.Failed {
		t.Fatalf("%+v", e)
	}
	// tpl: a confined bundle's templates read the bundle's own files.
	for f, want := range map[string]string{"vendor": "v1", "child": "child operator", "tpl": "from the bundle"} {
		if b, _ := os.ReadFile(filepath.Join(out, f)); string(b) != want {
			t.Fatalf("%s = %q, want %q", f, b, want)
		}
	}

	// The same bundle as the root manifest, pinned.
	os.RemoveAll(out)
	os.MkdirAll(out, 0o755)
	ccmOK(t, work, env, "apply", "obj://VENDOR/site.tar.gz", "--sha256", digest, "--trusted-keys", "trusted.keys", "--data", "who=cli")
	if b, _ := os.ReadFile(filepath.Join(out, "child")); string(b) != "child cli" {
		t.Fatalf("child = %q", b)
	}

	// Refusals at the root: exit 2, the source and the reason named,
	// nothing applied.
	obj, _ := js.ObjectStore(context.Background(), "VENDOR")
	evil := vendorBundle(t, out, "evil")
	evilArchive, _ := bundle.Pack(evil)
	obj.PutBytes(context.Background(), "evil.tar.gz", evilArchive)
	sig, _ := os.ReadFile(filepath.Join(work, "site.tar.gz.sig"))
	obj.PutBytes(context.Background(), "evil.tar.gz.sig", sig) // the vendor's signature, another bundle
	_, otherPub, _ := bundle.Keygen()
	os.WriteFile(filepath.Join(work, "other.keys"), []byte(otherPub+"\n"), 0o644)
	unreachable := filepath.Join(work, "down.json")
	os.WriteFile(unreachable, []byte(`{"url": "nats://127.0.0.1:1"}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"wrong pin", []string{"obj://VENDOR/site.tar.gz", "--sha256", strings.Repeat("0", 64)}, "bundle obj://VENDOR/site.tar.gz: sha256 is " + digest + ", but the pin says"},
		{"key not trusted", []string{"obj://VENDOR/site.tar.gz", "--trusted-keys", "other.keys"}, "bundle obj://VENDOR/site.tar.gz: signed by " + pub + ", which is not in the trusted keys"},
		{"tampered", []string{"obj://VENDOR/evil.tar.gz", "--trusted-keys", "trusted.keys"}, "bundle obj://VENDOR/evil.tar.gz: the signature is for sha256 " + digest},
		{"missing object", []string{"obj://VENDOR/nope.tar.gz"}, `bundle obj://VENDOR/nope.tar.gz: no object "nope.tar.gz" in bucket "VENDOR"`},
		{"unreachable", []string{"obj://VENDOR/site.tar.gz", "--context", unreachable}, "bundle obj://VENDOR/site.tar.gz: nats nats://127.0.0.1:1 (context " + unreachable + ")"},
		{"pin on a local file", []string{"site.yaml", "--sha256", digest}, "a sha256 pin applies to a remote bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(out)
			os.MkdirAll(out, 0o755)
			res := ccmtest.Run(t, work, env, append([]string{"apply"}, tc.args...)...)
			if res.Code != 2 || !strings.Contains(res.Stderr, tc.want) {
				t.Fatalf("exit %d, want 2 and %q\n%s%s", res.Code, tc.want, res.Stdout, res.Stderr)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Fatalf("files written: %v", ents)
			}
		})
	}
	// ccm bundle verify catches the same before publishing.
	os.WriteFile(filepath.Join(work, "evil.tar.gz"), evilArchive, 0o644)
	os.WriteFile(filepath.Join(work, "evil.tar.gz.sig"), sig, 0o644)
	for args, want := range map[string]string{
		"evil.tar.gz --trusted-keys trusted.keys":         "tampered or not the bundle signed",
		"site.tar.gz --trusted-keys other.keys":           "not in the trusted keys",
		"site.tar.gz --sha256 " + strings.Repeat("a", 64): "the pin says",
	} {
		res := ccmtest.Run(t, work, env, append([]string{"bundle", "verify"}, strings.Fields(args)...)...)
		if res.Code != 1 || !strings.Contains(res.Stderr, want) {
			t.Errorf("verify %s: exit %d, want 1 and %q\n%s", args, res.Code, want, res.Stderr)
		}
	}
	// Unsigned when required.
	obj.Delete(context.Background(), "site.tar.gz.sig")
	res = ccmtest.Run(t, work, env, "apply", "obj://VENDOR/site.tar.gz", "--trusted-keys", "trusted.keys")
	if res.Code != 2 || !strings.Contains(res.Stderr, "bundle obj://VENDOR/site.tar.gz: unsigned") {
		t.Fatalf("unsigned: exit %d\n%s", res.Code, res.Stderr)
	}
}

// TestRemoteChildren: a remote child failing (wrong pin, a net grant that
// does not allow its bucket, a name climbing out of its bundle) fails its
// apply resource, and the rest of the run goes on.
func TestRemoteChildren(t *testing.T) {
	env, js, _ := remoteEnv(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	archive, err := bundle.Pack(vendorBundle(t, out, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	escape := t.TempDir()
	writeManifest(t, escape, "manifest.yaml", "ccm:\n  resources:\n    - apply:\n        - ../../../../etc/x.yaml: {}\n")
	escArchive, _ := bundle.Pack(escape)
	unpinned := t.TempDir()
	writeManifest(t, unpinned, "manifest.yaml", "ccm:\n  plugins:\n    - x.wasm\n  resources:\n    - exec:\n        - /bin/true: {}\n")
	os.WriteFile(filepath.Join(unpinned, "x.wasm"), []byte("\x00asm"), 0o644)
	unpArchive, _ := bundle.Pack(unpinned)
	ctx := context.Background()
	obj, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "VENDOR"})
	if err != nil {
		t.Fatal(err)
	}
	obj.PutBytes(ctx, "site.tar.gz", archive)
	obj.PutBytes(ctx, "escape.tar.gz", escArchive)
	obj.PutBytes(ctx, "unpinned.tar.gz", unpArchive)
	g := `grants: {fs_read: ["` + out + `/**"], fs_write: ["` + out + `/**"], users: true, net: [%s]}`
	writeManifest(t, work, "site.yaml", `
ccm:
  resources:
    - apply:
        - obj://VENDOR/site.tar.gz: {sha256: "`+strings.Repeat("1", 64)+`"}
        - obj://VENDOR/escape.tar.gz: {}
        - obj://VENDOR/unpinned.tar.gz: {}
        - netdenied.yaml: {`+strings.Replace(g, "%s", `"nats:obj/OTHER", "example.com"`, 1)+`}
        - netallowed.yaml: {`+strings.Replace(g, "%s", `"nats:obj/VENDOR"`, 1)+`}
`)
	child := "ccm:\n  resources:\n    - apply:\n        - obj://VENDOR/site.tar.gz: {data: {who: %s}}\n"
	writeManifest(t, work, "netdenied.yaml", strings.Replace(child, "%s", "denied", 1))
	writeManifest(t, work, "netallowed.yaml", strings.Replace(child, "%s", "allowed", 1))
	o, res := applyJSONEnv(t, work, env, "site.yaml")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, tc := range []struct{ manifest, ref, want string }{
		{"site.yaml", "apply#obj://VENDOR/site.tar.gz", "the pin says " + strings.Repeat("1", 64)},
		{"", "apply#../../../../etc/x.yaml", "may only apply files inside its bundle"},
		{"site.yaml", "apply#obj://VENDOR/unpinned.tar.gz", "obj://VENDOR/unpinned.tar.gz!/manifest.yaml:3: ccm.plugins[0]: plugin x.wasm has no sha256 pin; a remote bundle's plugins must be pinned"},
		{"netdenied.yaml", "apply#obj://VENDOR/site.tar.gz", `the scope's grants do not allow net "nats:obj/VENDOR"`},
	} {
		e := o.eventIn(t, tc.manifest, tc.ref)
		if !e.Failed || !strings.Contains(strings.Join(e.Error, " "), tc.want) {
			t.Errorf("%s in %s: %+v, want failed with %q", tc.ref, tc.manifest, e, tc.want)
		}
	}
	if e := o.eventIn(t, "site.yaml", "apply#netallowed.yaml"); e.Failed {
		t.Errorf("netallowed: %+v", e)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "child")); string(b) != "child allowed" {
		t.Fatalf("child = %q", b)
	}

	// --render shows a remote root and its children without applying.
	os.RemoveAll(out)
	r := ccmOK(t, work, env, "apply", "obj://VENDOR/site.tar.gz", "--render")
	if !strings.Contains(r, out+"/vendor") || !strings.Contains(r, out+"/child") {
		t.Fatalf("render:\n%s", r)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("--render wrote %s", out)
	}
}

// TestRemoteHTTPSAndKV: a bundle from an https server (basic auth in the
// URL, never printed) and Hiera data from kv://.
func TestRemoteHTTPSAndKV(t *testing.T) {
	env, js, _ := remoteEnv(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	archive, _ := bundle.Pack(vendorBundle(t, out, "web"))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "op" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/site.tar.gz" {
			w.Write(archive)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	ca := filepath.Join(work, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	env = append(env, "SSL_CERT_FILE="+ca)

	ctx := context.Background()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "CONFIG"})
	if err != nil {
		t.Fatal(err)
	}
	kv.PutString(ctx, "hiera", "hierarchy:\n  order: [global]\ndata:\n  who: nobody\noverrides: {}\n")

	url := strings.Replace(srv.URL, "https://", "https://op:pw@", 1) + "/site.tar.gz"
	res := ccmtest.Run(t, work, env, "apply", url, "--sha256", bundle.Digest(archive), "--hiera", "kv://CONFIG/hiera")
	if o := res.Stdout + res.Stderr; res.Code != 0 || strings.Contains(o, ":pw@") || !strings.Contains(o, "op:xxxxx@") {
		t.Fatalf("exit %d; the password shows, or the source does not:\n%s", res.Code, o)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "child")); string(b) != "child nobody" {
		t.Fatalf("child = %q", b)
	}
	bad := strings.Replace(url, ":pw@", ":hunter2@", 1)
	res = ccmtest.Run(t, work, env, "apply", bad)
	if res.Code != 2 || !strings.Contains(res.Stderr, "401") || strings.Contains(res.Stderr+res.Stdout, "hunter2") {
		t.Fatalf("bad password: exit %d\n%s", res.Code, res.Stderr)
	}
	if p := ccmOK(t, work, env, "hiera", "parse", "kv://CONFIG/hiera", "--context", "CCM", "-S"); !strings.Contains(p, `"who": "nobody"`) {
		t.Fatalf("hiera parse kv://: %s", p)
	}
	res = ccmtest.Run(t, work, env, "apply", url, "--hiera", "kv://CONFIG/nope")
	if res.Code != 2 || !strings.Contains(res.Stderr, `could not get key "nope" from bucket "CONFIG"`) {
		t.Fatalf("missing kv hiera: exit %d\n%s", res.Code, res.Stderr)
	}

	// kvGet: CCM's signature; a missing key fails its resource; a
	// confined scope reads only the buckets its net grant names.
	kv.PutString(ctx, "motd", "hello")
	g := `grants: {fs_read: ["` + out + `/**"], fs_write: ["` + out + `/**"], users: true, net: [%s]}`
	writeManifest(t, work, "kv.yaml", `
ccm:
  resources:
    - file:
        - `+out+`/motd: {content: "{{ kvGet('CONFIG', 'motd') }}", owner: "@USER@", group: "@GROUP@", mode: "0644"}
        - `+out+`/missing: {content: "{{ kvGet('CONFIG', 'nope') }}", owner: "@USER@", group: "@GROUP@", mode: "0644"}
    - apply:
        - kvdenied.yaml: {`+strings.Replace(g, "%s", `"nats:kv/OTHER"`, 1)+`}
        - kvallowed.yaml: {`+strings.Replace(g, "%s", `"nats:kv/CONFIG"`, 1)+`}
`)
	child := "ccm:\n  resources:\n    - file:\n        - " + out + "/%s: {content: \"{{ kvGet('CONFIG', 'motd') }}\", owner: \"@USER@\", group: \"@GROUP@\", mode: \"0644\"}\n"
	writeManifest(t, work, "kvdenied.yaml", strings.Replace(child, "%s", "denied", 1))
	writeManifest(t, work, "kvallowed.yaml", strings.Replace(child, "%s", "allowed", 1))
	o, res := applyJSONEnv(t, work, env, "kv.yaml")
	if res.Code != 1 {
		t.Fatalf("kv.yaml: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	// ccm ensure: kvGet and --hiera kv:// too.
	u, grp := me(t)
	ccmOK(t, work, env, "ensure", "file", out+"/ensured", "--content", "{{ kvGet('CONFIG', 'motd') }} {{ Data.who }}", "--owner", u+":"+grp, "--mode", "0644", "--hiera", "kv://CONFIG/hiera")
	for _, f := range []string{"motd", "allowed"} {
		if b, _ := os.ReadFile(filepath.Join(out, f)); string(b) != "hello" {
			t.Errorf("%s = %q", f, b)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "ensured")); string(b) != "hello nobody" {
		t.Errorf("ensured = %q", b)
	}
	for ref, want := range map[string]string{
		"file#" + out + "/missing": `kvGet: could not get key "nope" from bucket "CONFIG"`,
		"file#" + out + "/denied":  `kvGet: refused: the scope's grants do not allow net "nats:kv/CONFIG"`,
	} {
		if e := o.event(t, ref); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), want) {
			t.Errorf("%s: %+v, want %q", ref, e, want)
		}
	}
}

// eventIn is the event of ref declared in manifest (any when "").
func (o runOutput) eventIn(t *testing.T, manifest, ref string) *session.Event {
	t.Helper()
	for _, e := range o.Events {
		if e.Ref() == ref && (manifest == "" || e.Manifest == manifest) {
			return e
		}
	}
	t.Fatalf("no event for %s in %s", ref, manifest)
	return nil
}

// TestRemoteBundlePluginConfined: a vendor's bundle ships its own pinned
// plugin, published to NATS and applied confined, with fs_read on nothing
// but OUT. The plugin file is read from the verified bundle as the bundle's
// manifests are, yet the plugin runs under the apply's grants: its write
// inside OUT lands, its write outside is refused and changes nothing.
func TestRemoteBundlePluginConfined(t *testing.T) {
	env, js, _ := remoteEnv(t)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	os.MkdirAll(out, 0o755)
	outside := filepath.Join(work, "outside")
	probeWasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "plugins", "probe", "probe.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(probeWasm)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "probe.wasm"), probeWasm, 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(path string) string {
		return `[{call: ccm_fs_write, request: {path: "` + path + `", content: "aGk=", mode: 420}}]`
	}
	writeManifest(t, dir, "manifest.yaml", `
ccm:
  plugins:
    - {path: probe.wasm, sha256: "`+hex.EncodeToString(sum[:])+`"}
  resources:
    - probe:
        - inside: {calls: `+write(filepath.Join(out, "probe"))+`}
        - outside: {calls: `+write(outside)+`}
`)
	archive, err := bundle.Pack(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	obj, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "VENDOR"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj.PutBytes(ctx, "plug.tar.gz", archive); err != nil {
		t.Fatal(err)
	}
	writeManifest(t, work, "site.yaml", `
ccm:
  resources:
    - apply:
        - obj://VENDOR/plug.tar.gz:
            allow_apply: false
            grants: {fs_read: ["`+out+`/**"], fs_write: ["`+out+`/**"], net: ["nats:obj/VENDOR"]}
`)
	_, res := applyJSONEnv(t, work, env, "site.yaml")
	if b, err := os.ReadFile(filepath.Join(out, "probe")); err != nil || string(b) != "hi" {
		t.Fatalf("the bundle's plugin did not write inside its grant: %q, %v\nexit %d\n%s%s", b, err, res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Lstat(outside); err == nil {
		t.Fatal("the bundle's plugin wrote outside its grant")
	}

	if !strings.Contains(res.Stdout+res.Stderr, "fs_write") {
		t.Errorf("the refused write is not named:\n%s%s", res.Stdout, res.Stderr)
	}
}
