package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type ent struct {
	name string
	typ  byte
	body string
	link string
	size int64 // when >0 and body empty: that many zero bytes
}

func tgz(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	for _, e := range ents {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Linkname: e.link}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
			if e.size > 0 {
				h.Size = e.size
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if e.size > 0 {
				zero := make([]byte, 1<<20)
				for left := e.size; left > 0; {
					n := min(left, int64(len(zero)))
					tw.Write(zero[:n])
					left -= n
				}
			} else {
				tw.Write([]byte(e.body))
			}
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

const manifest = "ccm:\n  resources: []\n"

func TestExtractLayouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		ents []ent
		sub  string
	}{
		{"root", []ent{{name: "manifest.yaml", body: manifest}, {name: "data/x.yaml", body: "a: 1"}}, ""},
		{"dot slash", []ent{{name: "./", typ: tar.TypeDir}, {name: "./manifest.yaml", body: manifest}}, ""},
		{"one top directory (tar czf b.tgz site)", []ent{{name: "site/", typ: tar.TypeDir}, {name: "site/manifest.yaml", body: manifest}}, "site"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			x, err := Extract(tgz(t, tc.ents...), cache, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(cache, x.Digest, tc.sub)
			if x.Root != want || x.Manifest != filepath.Join(want, ManifestName) {
				t.Fatalf("root %s manifest %s, want %s", x.Root, x.Manifest, want)
			}
			if b, _ := os.ReadFile(x.Manifest); string(b) != manifest {
				t.Fatalf("manifest %q", b)
			}
			fi, _ := os.Stat(filepath.Join(cache, x.Digest))
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("bundle directory mode %v, want 0700", fi.Mode().Perm())
			}
			fi, _ = os.Stat(x.Manifest)
			if fi.Mode().Perm()&0o222 != 0 {
				t.Errorf("extracted file is writable: %v", fi.Mode())
			}
			// Same bytes: same directory, reused.
			y, err := Extract(tgz(t, tc.ents...), cache, DefaultLimits)
			if err != nil || y.Root != x.Root {
				t.Fatalf("second extract: %v %v", y, err)
			}
		})
	}
}

func TestExtractRefusesUnsafe(t *testing.T) {
	m := ent{name: "manifest.yaml", body: manifest}
	for _, tc := range []struct {
		name string
		ents []ent
		want string
	}{
		{"dotdot", []ent{m, {name: "../../etc/evil", body: "x"}}, "climbs out"},
		{"dotdot inside", []ent{m, {name: "a/../../evil", body: "x"}}, "climbs out"},
		{"absolute", []ent{m, {name: "/etc/evil", body: "x"}}, "absolute name"},
		{"symlink", []ent{m, {name: "passwd", typ: tar.TypeSymlink, link: "/etc/passwd"}}, "symbolic link"},
		{"symlink then write through it", []ent{{name: "d", typ: tar.TypeSymlink, link: "/tmp"}, {name: "d/x", body: "x"}}, "symbolic link"},
		{"hard link", []ent{m, {name: "h", typ: tar.TypeLink, link: "manifest.yaml"}}, "hard link"},
		{"char device", []ent{m, {name: "null", typ: tar.TypeChar}}, "device file"},
		{"block device", []ent{m, {name: "sda", typ: tar.TypeBlock}}, "device file"},
		{"fifo", []ent{m, {name: "p", typ: tar.TypeFifo}}, "FIFO"},
		{"duplicate", []ent{m, {name: "manifest.yaml", body: "other"}}, "duplicate"},
		{"reserved", []ent{m, {name: ".complete", body: "x"}}, "reserved"},
		{"no manifest", []ent{{name: "x.yaml", body: "x"}}, "no manifest.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			_, err := Extract(tgz(t, tc.ents...), cache, DefaultLimits)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if _, err := os.Lstat("/etc/evil"); err == nil {
				t.Fatal("/etc/evil was written")
			}
			// Nothing is left behind but (for a bundle that extracted but
			// has no manifest) its own complete directory.
			ents, _ := os.ReadDir(cache)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".tmp-") {
					t.Errorf("temporary directory %s left behind", e.Name())
				}
			}
		})
	}
}

func TestExtractCaps(t *testing.T) {
	m := ent{name: "manifest.yaml", body: manifest}
	t.Run("gzip bomb", func(t *testing.T) {
		// 64 MiB of zeros, ~64 KB compressed: refused from its header,
		// over the 8 MiB floor and 100 times the archive.
		b := bomb(t, 64)
		_, err := Extract(b, t.TempDir(), DefaultLimits)
		if err == nil || !strings.Contains(err.Error(), "decompression bomb") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("total size", func(t *testing.T) {
		lim := DefaultLimits
		lim.MaxTotal, lim.MaxRatio = 1<<20, 1<<30
		_, err := Extract(tgz(t, m, ent{name: "big", size: 2 << 20}), t.TempDir(), lim)
		if err == nil || !strings.Contains(err.Error(), "expands to more than") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("entry count", func(t *testing.T) {
		ents := []ent{m}
		for i := 0; i < DefaultLimits.MaxEntries+1; i++ {
			ents = append(ents, ent{name: "d/" + strings.Repeat("x", 1+i%50) + string(rune('a'+i%26)) + "/" + itoa(i), typ: tar.TypeDir})
		}
		_, err := Extract(tgz(t, ents...), t.TempDir(), DefaultLimits)
		if err == nil || !strings.Contains(err.Error(), "more than 10000 entries") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("archive size", func(t *testing.T) {
		lim := DefaultLimits
		lim.MaxArchive = 10
		_, err := Extract(tgz(t, m), t.TempDir(), lim)
		if err == nil || !strings.Contains(err.Error(), "over the limit") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("not gzip", func(t *testing.T) {
		_, err := Extract([]byte("<html>"), t.TempDir(), DefaultLimits)
		if err == nil || !strings.Contains(err.Error(), "not a gzip tarball") {
			t.Fatalf("err %v", err)
		}
	})
}

// bomb is a real gzip bomb: a tarball holding manifest.yaml and a file of
// mib MiB of zeros, built cheaply as concatenated gzip members (which a
// gzip reader reads as one stream) of one compressed MiB of zeros.
func bomb(t testing.TB, mib int) []byte {
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	var head bytes.Buffer
	tw := tar.NewWriter(&head)
	tw.WriteHeader(&tar.Header{Name: "manifest.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(manifest))})
	tw.Write([]byte(manifest))
	tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(mib) << 20})
	tw.Flush()
	out := member(head.Bytes())
	zeros := member(make([]byte, 1<<20))
	for i := 0; i < mib; i++ {
		out = append(out, zeros...)
	}
	return append(out, member(make([]byte, 1024))...) // tar end: two zero blocks
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

func TestPackDeterministicAndRoundTrip(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "manifest.yaml"), []byte(manifest), 0o644)
	os.MkdirAll(filepath.Join(dir, "tpl"), 0o755)
	os.WriteFile(filepath.Join(dir, "tpl", "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	a, err := Pack(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "manifest.yaml"), time0, time0)
	b, _ := Pack(dir)
	if Digest(a) != Digest(b) {
		t.Fatal("packing the same tree twice gave two digests")
	}
	x, err := Extract(a, t.TempDir(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(x.Root, "tpl", "run.sh"))
	if err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("run.sh %v %v: executable bit lost", fi, err)
	}
	os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
	if _, err := Pack(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("pack with a symlink: %v", err)
	}
}

func TestSignatures(t *testing.T) {
	archive := tgz(t, ent{name: "manifest.yaml", body: manifest})
	seed, pub, err := Keygen()
	if err != nil {
		t.Fatal(err)
	}
	otherSeed, otherPub, _ := Keygen()
	sig, err := Sign(archive, seed)
	if err != nil {
		t.Fatal(err)
	}
	trusted := Policy{Trusted: []string{pub}, RequireSignature: true}
	if signer, err := trusted.Check(archive, sig); err != nil || signer != pub {
		t.Fatalf("good signature: %q %v", signer, err)
	}
	tampered := bytes.Clone(archive)
	tampered[len(tampered)-5] ^= 1
	otherSig, _ := Sign(archive, otherSeed)
	// A signature whose bytes were altered but whose digest line matches.
	s, _ := ParseSignature(sig)
	s.Sig[0] ^= 1
	badSig := []byte(strings.Replace(string(sig), strings.Fields(strings.Split(string(sig), "signature: ")[1])[0], b64(s.Sig), 1))
	for _, tc := range []struct {
		name    string
		pol     Policy
		archive []byte
		sig     []byte
		want    string
	}{
		{"tampered bundle", trusted, tampered, sig, "tampered"},
		{"bad signature", trusted, archive, badSig, "does not verify"},
		{"key not trusted", trusted, archive, otherSig, otherPub + ", which is not in the trusted keys"},
		{"unsigned when required", trusted, archive, nil, "unsigned"},
		{"garbage signature", trusted, archive, []byte("hello"), "not a ccm bundle signature"},
		{"wrong pin", Policy{SHA256: strings.Repeat("0", 64)}, archive, nil, "the pin says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.pol.Check(tc.archive, tc.sig)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := (Policy{SHA256: Digest(archive)}).Check(archive, nil); err != nil {
		t.Fatalf("right pin: %v", err)
	}
	if _, err := ParsePin("sha256:" + strings.ToUpper(Digest(archive))); err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePin("abc"); err == nil {
		t.Fatal("short pin accepted")
	}
}

func TestLoadTrusted(t *testing.T) {
	_, pub, _ := Keygen()
	f := filepath.Join(t.TempDir(), "keys")
	os.WriteFile(f, []byte("# vendors\n"+pub+" acme\n\n"), 0o644)
	keys, err := LoadTrusted(f)
	if err != nil || len(keys) != 1 || keys[0] != pub {
		t.Fatalf("%v %v", keys, err)
	}
	os.WriteFile(f, []byte("not-a-key\n"), 0o644)
	if _, err := LoadTrusted(f); err == nil || !errors.Is(err, err) || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("bad key: %v", err)
	}
}

var time0 = time.Unix(12345, 0)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func TestCacheMustBePrivate(t *testing.T) {
	archive := tgz(t, ent{name: "manifest.yaml", body: manifest})
	shared := t.TempDir()
	os.Chmod(shared, 0o1777)
	if _, err := Extract(archive, shared, DefaultLimits); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("shared cache: %v", err)
	}
	if fi, _ := os.Stat(shared); fi.Mode().Perm() != 0o777 {
		t.Fatalf("the shared directory's mode was changed to %v", fi.Mode())
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(t.TempDir(), link)
	if _, err := Extract(archive, link, DefaultLimits); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("linked cache: %v", err)
	}
	if os.Geteuid() == 0 {
		// Mode 0755 but another user's: they could write into it.
		theirs := t.TempDir()
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := Extract(archive, theirs, DefaultLimits); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("another user's cache: %v", err)
		}
	}
	fresh := filepath.Join(t.TempDir(), "a", "b")
	if _, err := Extract(archive, fresh, DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Fatalf("new cache mode %v", fi.Mode())
	}
}
