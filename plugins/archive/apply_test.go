package main

import (
	"archive/tar"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/schematest"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestFormats downloads and extracts each format over HTTPS, then runs
// again: the second run is stable and makes no request.
func TestFormats(t *testing.T) {
	owner, group := me(t)
	for _, ext := range []string{"tar.gz", "tgz", "tar", "zip"} {
		t.Run(ext, func(t *testing.T) {
			format := formatOf("x." + ext)
			srv := newServer(t, true)
			body := build(t, format, []member{
				{name: "app/", typ: tar.TypeDir, mode: 0o750},
				{name: "app/bin/tool", body: "#!/bin/sh\necho hi\n", mode: 0o755},
				{name: "./app/README", body: "read me\n"},
			})
			srv.files["/rel/app."+ext] = body
			dir := t.TempDir()
			name := filepath.Join(dir, "dl", "app."+ext)
			os.Mkdir(filepath.Dir(name), 0o755)
			props := map[string]any{
				"url": srv.URL + "/rel/app." + ext, "checksum": sum(body),
				"extract_parent": filepath.Join(dir, "opt"), "creates": filepath.Join(dir, "opt/app/bin/tool"),
				"owner": owner, "group": group,
			}
			h := newHost(nil, srv)
			res := apply(h, name, props, false)
			if res.Error != "" || !res.Changed {
				t.Fatalf("first run: %+v", res)
			}
			if got := readFile(t, filepath.Join(dir, "opt/app/bin/tool")); got != "#!/bin/sh\necho hi\n" {
				t.Fatalf("tool = %q", got)
			}
			if got := readFile(t, filepath.Join(dir, "opt/app/README")); got != "read me\n" {
				t.Fatalf("README = %q", got)
			}
			fi, _ := os.Stat(filepath.Join(dir, "opt/app/bin/tool"))
			if fi.Mode().Perm() != 0o755 {
				t.Fatalf("tool mode %v, want 0755", fi.Mode().Perm())
			}
			if fi, _ := os.Stat(filepath.Join(dir, "opt/app")); format != "zip" && fi.Mode().Perm() != 0o750 {
				t.Fatalf("app/ mode %v, want 0750", fi.Mode().Perm())
			}
			if got := readFile(t, name); got != string(body) {
				t.Fatal("the archive file is not the body served")
			}
			n := srv.count()
			res = apply(h, name, props, false)
			if res.Error != "" || res.Changed {
				t.Fatalf("second run: %+v", res)
			}
			if srv.count() != n {
				t.Fatalf("the second run made %d requests", srv.count()-n)
			}
		})
	}
}

// TestWrongChecksum leaves nothing behind: no archive, no temp file, no
// extracted entry.
func TestWrongChecksum(t *testing.T) {
	owner, group := me(t)
	srv := newServer(t, true)
	body := build(t, "tar.gz", files("a", "x"))
	srv.files["/a.tar.gz"] = body
	dir := t.TempDir()
	res := apply(newHost(nil, srv), dir+"/a.tar.gz", map[string]any{
		"url": srv.URL + "/a.tar.gz", "checksum": strings.Repeat("ab", 32),
		"extract_parent": dir + "/out", "owner": owner, "group": group,
	}, false)
	if !strings.Contains(res.Error, "differs from the expected") {
		t.Fatalf("error %q", res.Error)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestBasicAuthAndHeaders(t *testing.T) {
	owner, group := me(t)
	srv := newServer(t, true)
	srv.auth = [2]string{"deploy", "s3cret"}
	srv.header = map[string]string{"X-Token": "tok", "Accept": "application/octet-stream"}
	body := build(t, "zip", files("f", "1"))
	srv.files["/p.zip"] = body
	dir := t.TempDir()
	props := map[string]any{"url": srv.URL + "/p.zip", "owner": owner, "group": group,
		"username": "deploy", "password": "wrong", "headers": map[string]any{"X-Token": "tok", "Accept": "application/octet-stream"}}
	res := apply(newHost(nil, srv), dir+"/p.zip", props, false)
	if !strings.Contains(res.Error, "status 401") || strings.Contains(res.Error, "wrong") {
		t.Fatalf("wrong password: %q", res.Error)
	}
	props["password"] = "s3cret"
	delete(props["headers"].(map[string]any), "X-Token")
	if res := apply(newHost(nil, srv), dir+"/p.zip", props, false); !strings.Contains(res.Error, "status 403") {
		t.Fatalf("missing header: %q", res.Error)
	}
	props["headers"].(map[string]any)["X-Token"] = "tok"
	if res := apply(newHost(nil, srv), dir+"/p.zip", props, false); res.Error != "" || !res.Changed {
		t.Fatalf("%+v", res)
	}
	if readFile(t, dir+"/p.zip") != string(body) {
		t.Fatal("body differs")
	}
}

func TestNotFound(t *testing.T) {
	owner, group := me(t)
	srv := newServer(t, false)
	dir := t.TempDir()
	res := apply(newHost(nil, srv), dir+"/a.tar", map[string]any{"url": srv.URL + "/missing.tar", "owner": owner, "group": group}, false)
	if !strings.Contains(res.Error, "status 404") {
		t.Fatalf("error %q", res.Error)
	}
	if _, err := os.Stat(dir + "/a.tar"); !os.IsNotExist(err) {
		t.Fatal("a 404 wrote the archive")
	}
}

// TestRedirectUngranted: a confined scope may reach one server; a redirect
// from it to another is refused before it is followed.
func TestRedirectUngranted(t *testing.T) {
	owner, group := me(t)
	good, other := newServer(t, true), newServer(t, true)
	body := build(t, "tar", files("f", "1"))
	other.files["/a.tar"] = body
	good.redirect["/a.tar"] = other.URL + "/a.tar"
	good.files["/direct.tar"] = body
	dir := t.TempDir()
	goodHost := strings.TrimPrefix(good.URL, "https://")
	grants := trust.Chain{{FSRead: []string{dir + "/**"}, FSWrite: []string{dir + "/**"}, Net: []string{"GET https://" + goodHost}}}
	h := newHost(grants, good, other)
	res := apply(h, dir+"/a.tar", map[string]any{"url": good.URL + "/a.tar", "owner": owner, "group": group}, false)
	otherHost := strings.TrimPrefix(other.URL, "https://")
	if !strings.Contains(res.Error, "redirect from "+good.URL+"/a.tar refused") || !strings.Contains(res.Error, "net not granted for "+other.URL+"/a.tar (resolved to GET https://"+otherHost+")") {
		t.Fatalf("error %q", res.Error)
	}
	if other.count() != 0 {
		t.Fatal("the ungranted server was reached")
	}
	// The granted server itself is fine; the other, asked directly, is refused.
	if res := apply(h, dir+"/direct.tar", map[string]any{"url": good.URL + "/direct.tar", "owner": owner, "group": group}, false); res.Error != "" {
		t.Fatal(res.Error)
	}
	if res := apply(h, dir+"/b.tar", map[string]any{"url": other.URL + "/a.tar", "owner": owner, "group": group}, false); !strings.Contains(res.Error, "net not granted") {
		t.Fatalf("error %q", res.Error)
	}
	// fs_write outside the grant is refused before any request.
	n := good.count()
	grants[0].FSRead = []string{"/**"}
	if res := apply(newHost(grants, good), t.TempDir()+"/c.tar", map[string]any{"url": good.URL + "/direct.tar", "owner": owner, "group": group}, false); !strings.Contains(res.Error, "fs_write not granted") {
		t.Fatalf("error %q", res.Error)
	}
	if good.count() != n {
		t.Fatal("a request was made for a destination outside fs_write")
	}
}

// TestUnsafeEntries: each bad entry refuses the whole archive, and nothing
// is extracted (the first pass finds it).
func TestUnsafeEntries(t *testing.T) {
	owner, group := me(t)
	rows := []struct {
		name   string
		format string
		bad    member
		want   string
	}{
		{"traversal", "tar.gz", member{name: "a/../../evil", body: "x"}, "climbs out"},
		{"absolute", "tar", member{name: "/etc/evil", body: "x"}, "absolute name"},
		{"symlink", "tar.gz", member{name: "link", typ: tar.TypeSymlink, link: "/etc/passwd"}, "is a symlink"},
		{"hardlink", "tar", member{name: "hard", typ: tar.TypeLink, link: "/etc/passwd"}, "hard link"},
		{"hardlink to a later or missing entry", "tar.gz", member{name: "hard", typ: tar.TypeLink, link: "later"}, "not an earlier file of the archive"},
		{"hardlink climbing out", "tar", member{name: "hard", typ: tar.TypeLink, link: "../first"}, "hard link"},
		{"device", "tar", member{name: "dev", typ: tar.TypeChar}, "device"},
		{"fifo", "tar.gz", member{name: "fifo", typ: tar.TypeFifo}, "device, FIFO"},
		{"zip traversal", "zip", member{name: "../evil", body: "x"}, "climbs out"},
		{"zip symlink", "zip", member{name: "l", typ: tar.TypeSymlink, link: "/etc"}, "symlink"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			srv := newServer(t, false)
			body := build(t, row.format, append(files("first", "ok"), row.bad))
			srv.files["/a."+row.format] = body
			dir := t.TempDir()
			res := apply(newHost(nil, srv), dir+"/a."+row.format, map[string]any{
				"url": srv.URL + "/a." + row.format, "checksum": sum(body), "extract_parent": dir + "/out",
				"owner": owner, "group": group,
			}, false)
			if !strings.Contains(res.Error, row.want) || !strings.Contains(res.Error, "nothing was extracted") {
				t.Fatalf("error %q, want %q", res.Error, row.want)
			}
			if _, err := os.Stat(dir + "/out"); !os.IsNotExist(err) {
				t.Fatal("something was extracted")
			}
			if _, err := os.Lstat(filepath.Join(dir, "evil")); !os.IsNotExist(err) {
				t.Fatal("the traversal entry was written")
			}
		})
	}
}

// TestDecompressionBomb: a small tar.gz that expands a thousandfold is
// refused once it passes ratioFrom, before anything is written.
func TestDecompressionBomb(t *testing.T) {
	owner, group := me(t)
	// 8 members of 256 KiB of zeros: 2 MiB from a few KiB, checked past 1 MiB.
	zeros := string(bytes.Repeat([]byte{0}, 256<<10))
	var ms []member
	for i := range 8 {
		ms = append(ms, member{name: "z" + itoa(i), body: zeros})
	}
	tune := tuning{ratioFrom: 1 << 20}
	for _, format := range []string{"tar.gz", "zip"} {
		t.Run(format, func(t *testing.T) {
			body := build(t, format, ms)
			t.Logf("bomb: %d bytes expanding to %d", len(body), 8*len(zeros))
			srv := newServer(t, false)
			srv.files["/b."+format] = body
			dir := t.TempDir()
			res := applyTuned(newHost(nil, srv), tune, dir+"/b."+format, map[string]any{
				"url": srv.URL + "/b." + format, "extract_parent": dir + "/out", "owner": owner, "group": group,
			}, false)
			if !strings.Contains(res.Error, "decompression bomb") || !strings.Contains(res.Error, "nothing was extracted") {
				t.Fatalf("error %q", res.Error)
			}
			if _, err := os.Stat(dir + "/out"); !os.IsNotExist(err) {
				t.Fatal("something was extracted")
			}
		})
	}
}

// TestNoop makes no request and changes nothing.
func TestNoop(t *testing.T) {
	owner, group := me(t)
	srv := newServer(t, true)
	srv.files["/a.tgz"] = build(t, "tar.gz", files("f", "1"))
	dir := t.TempDir()
	res := apply(newHost(nil, srv), dir+"/a.tgz", map[string]any{
		"url": srv.URL + "/a.tgz", "extract_parent": dir + "/out", "owner": owner, "group": group,
	}, true)
	if res.Error != "" || !res.Changed || res.NoopMessage != "Would have downloaded. Would have extracted" {
		t.Fatalf("%+v", res)
	}
	if srv.count() != 0 {
		t.Fatal("noop made a request")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("noop wrote %v", ents)
	}
	// And the host itself refuses a fetch in a read-only mode.
	h := newHost(nil, srv)
	h.ReadOnly = true
	if err := download(h, spec{url: srv.URL + "/a.tgz", name: dir + "/a.tgz"}); err == nil || !strings.Contains(err.Error(), "noop mode is read-only") {
		t.Fatalf("err %v", err)
	}
	if srv.count() != 0 {
		t.Fatal("a read-only fetch made a request")
	}
}

// TestCreatesCleanup: cleanup removes the archive; creates keeps later runs
// from downloading it again.
func TestCreatesCleanup(t *testing.T) {
	owner, group := me(t)
	srv := newServer(t, false)
	srv.files["/a.zip"] = build(t, "zip", files("bin/x", "1"))
	dir := t.TempDir()
	props := map[string]any{"url": srv.URL + "/a.zip", "extract_parent": dir + "/out", "creates": dir + "/out/bin/x",
		"cleanup": true, "owner": owner, "group": group}
	h := newHost(nil, srv)
	if res := apply(h, dir+"/a.zip", props, false); res.Error != "" || !res.Changed {
		t.Fatalf("%+v", res)
	}
	if _, err := os.Stat(dir + "/a.zip"); !os.IsNotExist(err) {
		t.Fatal("cleanup left the archive")
	}
	if readFile(t, dir+"/out/bin/x") != "1" {
		t.Fatal("not extracted")
	}
	if res := apply(h, dir+"/a.zip", props, false); res.Error != "" || res.Changed || srv.count() != 1 {
		t.Fatalf("second run %+v, %d requests", res, srv.count())
	}
	// Without the creates path, it is fetched and extracted again.
	os.Remove(dir + "/out/bin/x")
	if res := apply(h, dir+"/a.zip", props, false); res.Error != "" || !res.Changed || srv.count() != 2 {
		t.Fatalf("after creates removed: %+v", res)
	}
}

// TestExistingChecksum: an archive already there with the right checksum
// is not fetched; a missing creates extracts it again from the local file.
func TestExistingChecksum(t *testing.T) {
	owner, group := me(t)
	srv := newServer(t, false)
	body := build(t, "tar", files("x", "1"))
	dir := t.TempDir()
	os.WriteFile(dir+"/a.tar", body, 0o644)
	props := map[string]any{"url": srv.URL + "/a.tar", "checksum": sum(body), "extract_parent": dir + "/out",
		"creates": dir + "/out/x", "owner": owner, "group": group}
	res := apply(newHost(nil, srv), dir+"/a.tar", props, false)
	if res.Error != "" || !res.Changed || srv.count() != 0 {
		t.Fatalf("%+v, %d requests", res, srv.count())
	}
	if readFile(t, dir+"/out/x") != "1" {
		t.Fatal("not extracted")
	}
}

func TestOwnerGroupAndAbsent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	srv := newServer(t, false)
	srv.files["/a.tgz"] = build(t, "tar.gz", []member{{name: "d/f", body: "1", mode: 0o4755}})
	dir := t.TempDir()
	props := map[string]any{"url": srv.URL + "/a.tgz", "extract_parent": dir + "/out", "owner": "nobody", "group": "65534"}
	h := newHost(nil, srv)
	if res := apply(h, dir+"/a.tgz", props, false); res.Error != "" {
		t.Fatal(res.Error)
	}
	for _, p := range []string{dir + "/a.tgz", dir + "/out", dir + "/out/d", dir + "/out/d/f"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 65534 || st.Gid != 65534 {
			t.Fatalf("%s owned by %d:%d", p, st.Uid, st.Gid)
		}
		if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			t.Fatalf("%s kept a setuid bit", p)
		}
	}
	res := apply(h, dir+"/a.tgz", map[string]any{"url": srv.URL + "/a.tgz", "ensure": "absent"}, false)
	if res.Error != "" || !res.Changed {
		t.Fatalf("%+v", res)
	}
	if _, err := os.Stat(dir + "/a.tgz"); !os.IsNotExist(err) {
		t.Fatal("absent left the archive")
	}
	if readFile(t, dir+"/out/d/f") != "1" {
		t.Fatal("absent removed what was extracted (CCM leaves it)")
	}
}

func TestValidate(t *testing.T) {
	ok := map[string]any{"url": "https://x.example/a.tar.gz", "owner": "root", "group": "root"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range ok {
			m[a] = b
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	rows := []struct {
		name  string
		props map[string]any
		want  string
	}{
		{"/d/a.tar.gz", ok, ""},
		{"/d/a.tgz", ok, ""},
		{"/d/a.tgz", map[string]any{"url": "https://x.example/a.tgz", "owner": "root", "group": "root", "checksum": strings.Repeat("a", 64),
			"extract_parent": "/opt", "creates": "/opt/x", "cleanup": true, "username": "u", "password": "p",
			"headers": map[string]any{"Authorization": "Bearer t"}, "ensure": "present"}, ""},
		{"/d/a.tgz", map[string]any{"url": "{{ Data.url }}", "ensure": "absent"}, ""},
		{"/d/a.zip", ok, "same archive type"},
		{"/d/a.rar", ok, "must end in"},
		{"d/a.tar.gz", ok, "absolute"},
		{"/d/a.tar.gz", with("url", "ftp://x/a.tar.gz"), "http"},
		{"/d/a.tar.gz", with("url", "https://x.example/"), "filename"},
		{"/d/a.tar.gz", with("url", "https://u:p@x.example/a.tar.gz"), "credentials"},
		{"/d/a.tar.gz", with("url", nil), "url is required"},
		{"/d/a.tar.gz", with("checksum", "abc"), "64 digits"},
		{"/d/a.tar.gz", with("cleanup", true), "cleanup requires extract_parent"},
		{"/d/a.tar.gz", with("owner", nil), "owner is required"},
		{"/d/a.tar.gz", with("extract_parent", "/x/../y"), "clean"},
		{"/d/a.tar.gz", with("headers", map[string]any{"Bad Name": "v"}), "header"},
		{"/d/a.tar.gz", with("ensure", "latest"), "present or absent"},
		{"/d/a.tar.gz", with("mode", "0644"), "unknown property"},
	}
	for _, row := range rows {
		t.Run(row.name+" "+row.want, func(t *testing.T) {
			errs := (&archiveType{}).Validate(absReq(row.name, row.props))
			got := strings.Join(errs, "; ")
			if row.want == "" && got != "" || !strings.Contains(got, row.want) {
				t.Fatalf("errors %q, want %q", got, row.want)
			}
			if row.want == "" {
				schematest.Accepts(t, (&archiveType{}).Info(), absReq(row.name, row.props).Properties)
			}
		})
	}
}

// TestLargeFiles: files larger than one write go to the host in parts and
// arrive whole.
func TestLargeFiles(t *testing.T) {
	owner, group := me(t)
	// 64 KiB parts: the 200 KB file goes as first, next, next, last.
	big := make([]byte, 200<<10+123)
	tune := tuning{part: 64 << 10}
	if _, err := rand.NewChaCha8([32]byte{1}).Read(big); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"tar.gz", "zip"} {
		t.Run(format, func(t *testing.T) {
			srv := newServer(t, false)
			srv.files["/big."+format] = build(t, format, []member{{name: "big.bin", body: string(big)}, {name: "small", body: "s"}})
			dir := t.TempDir()
			h := newHost(nil, srv)
			res := applyTuned(h, tune, dir+"/big."+format, map[string]any{"url": srv.URL + "/big." + format, "extract_parent": dir + "/out", "owner": owner, "group": group}, false)
			if n := h.Count(abi.CallFSWrite); n != 5 {
				t.Fatalf("%d ccm_fs_write calls, want 5 (4 parts and the small file)", n)
			}
			if res.Error != "" {
				t.Fatal(res.Error)
			}
			if b, _ := os.ReadFile(dir + "/out/big.bin"); !bytes.Equal(b, big) {
				t.Fatalf("big.bin: %d bytes, not the %d archived", len(b), len(big))
			}
			if ents, _ := os.ReadDir(dir + "/out"); len(ents) != 2 {
				t.Fatalf("out: %v (a staging file left behind?)", ents)
			}
		})
	}
}

// TestHardLinkCopies: a hard link to an earlier file of the archive is
// written as a copy of it.
func TestHardLinkCopies(t *testing.T) {
	owner, group := me(t)
	srv := newServer(t, false)
	srv.files["/h.tar"] = build(t, "tar", []member{{name: "bin/tool", body: "tool", mode: 0o755}, {name: "bin/alias", typ: tar.TypeLink, link: "bin/tool"}})
	dir := t.TempDir()
	res := apply(newHost(nil, srv), dir+"/h.tar", map[string]any{"url": srv.URL + "/h.tar", "extract_parent": dir + "/out", "owner": owner, "group": group}, false)
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	fi, err := os.Stat(dir + "/out/bin/alias")
	if err != nil || readFile(t, dir+"/out/bin/alias") != "tool" || fi.Mode().Perm() != 0o755 {
		t.Fatalf("alias: %v %v", fi, err)
	}
}
