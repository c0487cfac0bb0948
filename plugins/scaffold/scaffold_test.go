package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/plugins/internal/fakehost"
	"github.com/ccm-dev/ccm/plugins/internal/schematest"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// newHost is a fakehost serving the scaffold's capabilities, with facts
// and data as a manifest would give them.
func newHost() *fakehost.Host {
	return &fakehost.Host{
		Info: (&scaffoldType{}).Info(),
		Data: map[string]any{
			"facts":   map[string]any{"host": map[string]any{"info": map[string]any{"hostname": "web01"}}},
			"data":    map[string]any{"port": float64(8080), "list": []any{"a", "b"}, "name": "demo", "big": float64(1000000)},
			"environ": map[string]any{},
		},
	}
}

// tree writes files (rel path → content) under dir.
func tree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// read returns every regular file under dir (rel path → content).
func read(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func apply(h *fakehost.Host, target string, props map[string]any, wd string) abi.Result {
	p := map[string]any{"ensure": "present"}
	for k, v := range props {
		p[k] = v
	}
	h.Properties = p
	return (&scaffoldType{}).Apply(h, abi.Request{Type: typeName, Name: target, Properties: p, WorkingDir: wd, Noop: h.ReadOnly, Diff: h.ReadOnly})
}

func equal(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("files: got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: got %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

// converge applies, checks the tree, then applies again: stable, no mutation.
func converge(t *testing.T, props map[string]any, src map[string]string, want map[string]string) (dir, target string) {
	t.Helper()
	dir = t.TempDir()
	tree(t, filepath.Join(dir, "src"), src)
	target = filepath.Join(dir, "out")
	h := newHost()
	props["source"] = "src"
	res := apply(h, target, props, dir)
	if res.Error != "" || !res.Changed {
		t.Fatalf("first apply: %+v", res)
	}
	equal(t, read(t, target), want)
	h.Reset()
	res = apply(h, target, props, dir)
	if res.Error != "" || res.Changed {
		t.Fatalf("second apply is not stable: %+v", res)
	}
	if _, post := props["post"]; !post { // post stages files to run its commands on
		if m := h.Mutations(); len(m) > 0 {
			t.Fatalf("second apply mutated: %v", m)
		}
	}
	equal(t, read(t, target), want)
	return dir, target
}

func TestEnginesRender(t *testing.T) {
	cases := []struct {
		name  string
		props map[string]any
		src   map[string]string
		want  map[string]string
	}{
		{
			name:  "jet default with partials and data",
			props: map[string]any{},
			src: map[string]string{
				"_partials/header.conf": "# [[ facts.host.info.hostname ]]\n",
				"app.conf":              "[[ render(\"_partials/header.conf\", .) ]]port = [[ data.port ]] big = [[ data.big ]]\n[[ range i, v := data.list ]][[ i ]]=[[ v ]] [[ end ]]\n",
				"sub/deep/x.txt":        "[[ upper(data.name) ]] [[ lookup(\"data.name\") ]] [[ lookup(\"data.nope\", \"dflt\") ]] <&>",
			},
			want: map[string]string{
				"app.conf":       "# web01\nport = 8080 big = 1000000\n0=a 1=b \n",
				"sub/deep/x.txt": "DEMO demo dflt <&>",
			},
		},
		{
			name:  "go with sprig, write and render",
			props: map[string]any{"engine": "go"},
			src: map[string]string{
				"_partials/p":  "partial {{ .data.name }}",
				"a.conf":       "{{ .facts.host.info.hostname | upper }} {{ join \",\" .data.list }} {{ .data.port }} {{ render \"_partials/p\" . }}{{ write \"extra/e.txt\" \"extra\" }}\n",
				"b.conf":       "{{ range $i, $e := .data.list }}{{ $i }}{{ $e }}{{ end }} {{ index .facts \"host\" | toJson }} {{ lookup \"facts.host.info.hostname\" }}",
				"nested/c.txt": "{{ default \"x\" .data.missing }} {{ trimSuffix \"o\" \"demo\" }}",
			},
			want: map[string]string{
				"a.conf":       "WEB01 a,b 8080 partial demo\n",
				"b.conf":       `0a1b {"info":{"hostname":"web01"}} web01`,
				"nested/c.txt": "x dem",
				"extra/e.txt":  "extra",
			},
		},
		{
			name:  "go with custom delimiters",
			props: map[string]any{"engine": "go", "left_delimiter": "<<", "right_delimiter": ">>"},
			src:   map[string]string{"unit.service": "ExecStart={{ not a template }} << .data.port >>\n"},
			want:  map[string]string{"unit.service": "ExecStart={{ not a template }} 8080\n"},
		},
		{
			name:  "jet with custom delimiters",
			props: map[string]any{"left_delimiter": "<%", "right_delimiter": "%>"},
			src:   map[string]string{"a.yaml": "port: <% data.port %> [[ kept ]]\n"},
			want:  map[string]string{"a.yaml": "port: 8080 [[ kept ]]\n"},
		},
		{
			name:  "skip_empty leaves out whitespace-only output",
			props: map[string]any{"skip_empty": true},
			src:   map[string]string{"empty.txt": "[[ if false ]]x[[ end ]]\n  \n", "full.txt": "x"},
			want:  map[string]string{"full.txt": "x"},
		},
		{
			name:  "without skip_empty an empty file is produced",
			props: map[string]any{},
			src:   map[string]string{"empty.txt": "[[ if false ]]x[[ end ]]", "full.txt": "x"},
			want:  map[string]string{"empty.txt": "", "full.txt": "x"},
		},
		{
			name:  "data replaces the manifest's data, facts stay",
			props: map[string]any{"data": map[string]any{"port": float64(9090)}, "engine": "go"},
			src:   map[string]string{"a": "{{ .data.port }} {{ .data.name }} {{ .facts.host.info.hostname }}"},
			want:  map[string]string{"a": "9090 <no value> web01"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			converge(t, c.props, c.src, c.want)
		})
	}
}

func TestUpdateOnlyChangedFiles(t *testing.T) {
	dir, target := converge(t, map[string]any{}, map[string]string{"a": "A", "b": "[[ data.name ]]"}, map[string]string{"a": "A", "b": "demo"})
	tree(t, filepath.Join(dir, "src"), map[string]string{"a": "A2"})
	h := newHost()
	res := apply(h, target, map[string]any{"source": "src"}, dir)
	if res.Error != "" || !res.Changed || len(res.Messages) != 1 || !strings.Contains(res.Messages[0], "update "+target+"/a") {
		t.Fatalf("apply: %+v", res)
	}
	if n := h.Count(abi.CallFSWrite); n != 1 {
		t.Fatalf("%d writes, want 1 (only the changed file)", n)
	}
}

func TestNoopWritesNothing(t *testing.T) {
	dir := t.TempDir()
	tree(t, filepath.Join(dir, "src"), map[string]string{"a": "new [[ data.name ]]\n", "b": "same\n"})
	target := filepath.Join(dir, "out")
	tree(t, target, map[string]string{"a": "old\n", "b": "same\n", "stray": "x"})
	h := newHost()
	h.ReadOnly = true
	res := apply(h, target, map[string]any{"source": "src", "purge": true}, dir)
	if res.Error != "" || !res.Changed || res.NoopMessage != "Would have changed 2 scaffold files" {
		t.Fatalf("noop: %+v", res)
	}
	if !strings.Contains(res.Diff, "-old\n+new demo") {
		t.Fatalf("noop diff: %q", res.Diff)
	}
	if !strings.Contains(strings.Join(res.Messages, "\n"), "purge "+target+"/stray") {
		t.Fatalf("noop messages: %v", res.Messages)
	}
	equal(t, read(t, target), map[string]string{"a": "old\n", "b": "same\n", "stray": "x"})
	if m := h.Mutations(); len(m) > 0 {
		t.Fatalf("noop mutated: %v", m)
	}
}

func TestPurgeConfinedToTarget(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	tree(t, outside, map[string]string{"keep": "outside", "deep/keep2": "outside"})
	tree(t, filepath.Join(dir, "src"), map[string]string{"a": "a"})
	target := filepath.Join(dir, "out")
	tree(t, target, map[string]string{"stray": "x", "sub/stray2": "y"})
	if err := os.Symlink(filepath.Join(outside, "keep"), filepath.Join(target, "link-file")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "deep"), filepath.Join(target, "link-dir")); err != nil {
		t.Fatal(err)
	}
	// Without purge the strays do not make it unstable.
	h := newHost()
	res := apply(h, target, map[string]any{"source": "src"}, dir)
	if res.Error != "" || !res.Changed {
		t.Fatalf("apply: %+v", res)
	}
	res = apply(h, target, map[string]any{"source": "src"}, dir)
	if res.Error != "" || res.Changed {
		t.Fatalf("without purge: %+v", res)
	}
	res = apply(h, target, map[string]any{"source": "src", "purge": true}, dir)
	if res.Error != "" || !res.Changed {
		t.Fatalf("purge: %+v", res)
	}
	equal(t, read(t, target), map[string]string{"a": "a"})
	for _, l := range []string{"link-file", "link-dir"} {
		if _, err := os.Lstat(filepath.Join(target, l)); !os.IsNotExist(err) {
			t.Fatalf("%s: the link itself should be purged: %v", l, err)
		}
	}
	equal(t, read(t, outside), map[string]string{"keep": "outside", "deep/keep2": "outside"})
	res = apply(h, target, map[string]any{"source": "src", "purge": true}, dir)
	if res.Error != "" || res.Changed {
		t.Fatalf("after purge: %+v", res)
	}
}

func TestSymlinkedDirectoryInTargetRefused(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	tree(t, outside, map[string]string{"conf": "outside"})
	tree(t, filepath.Join(dir, "src"), map[string]string{"sub/conf": "inside"})
	target := filepath.Join(dir, "out")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(target, "sub")); err != nil {
		t.Fatal(err)
	}
	res := apply(newHost(), target, map[string]any{"source": "src"}, dir)
	if !strings.Contains(res.Error, target+"/sub is a symlink") {
		t.Fatalf("want a refusal naming the link, got %+v", res)
	}
	equal(t, read(t, outside), map[string]string{"conf": "outside"})
	// The target itself a symlink is refused too.
	link := filepath.Join(dir, "linked")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	res = apply(newHost(), link, map[string]any{"source": "src"}, dir)
	if !strings.Contains(res.Error, "is a symlink") {
		t.Fatalf("target symlink: %+v", res)
	}
	equal(t, read(t, outside), map[string]string{"conf": "outside"})
}

func TestPost(t *testing.T) {
	dir, target := converge(t, map[string]any{"post": []any{
		map[string]any{"*.sh": "chmod +x {}"},
		map[string]any{"*.txt": "sed -i s/a/b/"},
	}}, map[string]string{"run.sh": "#!/bin/sh\n", "x.txt": "a[[ data.name ]]\n", "keep": "a"}, map[string]string{"run.sh": "#!/bin/sh\n", "x.txt": "bdemo\n", "keep": "a"})
	st, err := os.Stat(filepath.Join(target, "run.sh"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("run.sh mode: %v %v", st.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(target, stagingDir)); !os.IsNotExist(err) {
		t.Fatalf("the staging directory is left behind: %v", err)
	}
	_ = dir
}

func TestPostFailureAndDenied(t *testing.T) {
	dir := t.TempDir()
	tree(t, filepath.Join(dir, "src"), map[string]string{"a.sh": "x"})
	target := filepath.Join(dir, "out")
	res := apply(newHost(), target, map[string]any{"source": "src", "post": []any{map[string]any{"*.sh": "false"}}}, dir)
	if !strings.Contains(res.Error, "post-processing a.sh with \"false\": exit status 1") {
		t.Fatalf("failing post: %+v", res)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a failed post left the target behind: %v", err)
	}
	h := newHost()
	h.Grants = trust.Chain{{FSRead: []string{dir + "/**"}, FSWrite: []string{target, target + "/**"}}}
	res = apply(h, target, map[string]any{"source": "src", "post": []any{map[string]any{"*.sh": "chmod +x {}"}}}, dir)
	if !strings.Contains(res.Error, "denied") || !strings.Contains(res.Error, "exec") {
		t.Fatalf("post without an exec grant: %+v", res)
	}
}

func TestAbsentRemovesOnlyManagedFiles(t *testing.T) {
	dir, target := converge(t, map[string]any{}, map[string]string{"a": "a", "sub/b": "b", "only/c": "c"}, map[string]string{"a": "a", "sub/b": "b", "only/c": "c"})
	tree(t, target, map[string]string{"sub/mine": "not the scaffold's"})
	h := newHost()
	res := apply(h, target, map[string]any{"source": "src", "ensure": "absent"}, dir)
	if res.Error != "" || !res.Changed {
		t.Fatalf("absent: %+v", res)
	}
	equal(t, read(t, target), map[string]string{"sub/mine": "not the scaffold's"})
	if _, err := os.Stat(filepath.Join(target, "only")); !os.IsNotExist(err) {
		t.Fatalf("empty directory left: %v", err)
	}
	res = apply(h, target, map[string]any{"source": "src", "ensure": "absent"}, dir)
	if res.Error != "" || res.Changed {
		t.Fatalf("absent again: %+v", res)
	}
	os.Remove(filepath.Join(target, "sub/mine"))
	os.Remove(filepath.Join(target, "sub"))
	_ = apply(h, target, map[string]any{"source": "src"}, dir)
	res = apply(h, target, map[string]any{"source": "src", "ensure": "absent"}, dir)
	if res.Error != "" || !res.Changed {
		t.Fatalf("absent: %+v", res)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("an empty target should be removed: %v", err)
	}
}

func TestBudgets(t *testing.T) {
	cases := []struct {
		name   string
		engine string
		src    map[string]string
		want   string
	}{
		{"jet loop", "jet", map[string]string{"a": "[[ range i := ints(0, 100000000) ]][[ end ]]"}, "max_steps"},
		{"jet nested loops", "jet", map[string]string{"a": "[[ range i := ints(0, 2000) ]][[ range j := ints(0, 2000) ]][[ end ]][[ end ]]"}, "max_steps"},
		{"jet output", "jet", map[string]string{"a": "[[ range i := ints(0, 20000) ]][[ repeat(\"x\", 1000) ]][[ end ]]"}, "max_file_bytes"},
		{"jet string doubling", "jet", map[string]string{"a": "[[ s := \"xxxxxxxxxxxxxxxx\" ]][[ range i := ints(0, 40) ]][[ s = s + s ]][[ end ]]"}, "max_file_bytes"},
		{"jet self include", "jet", map[string]string{"a": "[[ include \"/a\" ]]"}, "template budget exceeded"},
		{"go until", "go", map[string]string{"a": "{{ range until 100000000 }}{{ end }}"}, "max_steps"},
		{"go range int", "go", map[string]string{"a": "{{ range 100000000 }}{{ end }}"}, "max_steps"},
		{"go repeat", "go", map[string]string{"a": "{{ repeat 100000000 \"xxxxxxxxxx\" }}"}, "max_file_bytes"},
		{"go template fan-out", "go", map[string]string{"a": `{{define "x"}}{{template "y"}}{{template "y"}}{{end}}{{define "y"}}{{template "z"}}{{template "z"}}{{end}}{{define "z"}}{{range 1000}}{{range 1000}}{{end}}{{end}}{{end}}{{template "x"}}`}, "max_steps"},
		{"go recursive template", "go", map[string]string{"a": `{{define "r"}}{{template "r"}}{{end}}{{template "r"}}`}, "exceeded maximum template depth"},
		{"go indent", "go", map[string]string{"a": "{{ indent 100000000 \"x\" }}"}, "max_file_bytes"},
		{"go total", "go", map[string]string{"a": "{{ repeat 15000000 \"x\" }}", "b": "{{ repeat 15000000 \"x\" }}", "c": "{{ repeat 15000000 \"x\" }}", "d": "{{ repeat 15000000 \"x\" }}", "e": "{{ repeat 15000000 \"x\" }}"}, "max_total_bytes"},
		{"jet deep nesting", "jet", map[string]string{"a": "[[ " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " ]]"}, "max_nesting"},
		{"go deep nesting", "go", map[string]string{"a": "{{ " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + " }}"}, "max_nesting"},
		{"jet nested blocks", "jet", map[string]string{"a": strings.Repeat("[[ if true ]]", 200000) + strings.Repeat("[[ end ]]", 200000)}, "max_nesting"},
		{"go nested blocks", "go", map[string]string{"a": strings.Repeat("{{ if true }}", 200000) + strings.Repeat("{{ end }}", 200000)}, "max_nesting"},
		{"render recursion", "jet", map[string]string{"_partials/p": "[[ render(\"_partials/p\", .) ]]", "a": "[[ render(\"_partials/p\", .) ]]"}, "max_depth"},
		{"render outside the source", "go", map[string]string{"a": "{{ render \"../x\" . }}"}, "is not in source directory"},
		{"write outside the target", "go", map[string]string{"a": "{{ write \"../x\" \"y\" }}"}, "is not in target directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, filepath.Join(dir, "src"), c.src)
			target := filepath.Join(dir, "out")
			res := apply(newHost(), target, map[string]any{"source": "src", "engine": c.engine}, dir)
			if !strings.Contains(res.Error, c.want) {
				t.Fatalf("want an error with %q, got %+v", c.want, res)
			}
			if len(res.Error) > 2000 {
				t.Fatalf("error too long (%d bytes): %.300s", len(res.Error), res.Error)
			}
			if _, err := os.Stat(target); !os.IsNotExist(err) {
				t.Fatalf("a refused scaffold created its target: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
				t.Fatalf("wrote outside: %v", err)
			}
		})
	}
}

func TestConfinedGrant(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	tree(t, filepath.Dir(secret), map[string]string{"secret": "s3cret"})
	tree(t, filepath.Join(dir, "src"), map[string]string{"a": "x", "r": "{{ readFile \"" + secret + "\" }}"})
	allowed := filepath.Join(dir, "allowed")
	grant := trust.Chain{{FSRead: []string{dir + "/src/**"}, FSWrite: []string{allowed, allowed + "/**"}}}

	h := newHost()
	h.Grants = grant
	res := apply(h, filepath.Join(dir, "elsewhere"), map[string]any{"source": "src", "engine": "go"}, dir)
	if !strings.Contains(res.Error, "denied") || !strings.Contains(res.Error, secret) {
		t.Fatalf("reading a file outside the grant: %+v", res)
	}
	tree(t, filepath.Join(dir, "src2"), map[string]string{"a": "x"})
	grant = trust.Chain{{FSRead: []string{dir + "/src2/**", dir + "/src2", allowed, allowed + "/**"}, FSWrite: []string{allowed, allowed + "/**"}}}
	h.Grants = grant
	res = apply(h, filepath.Join(dir, "elsewhere"), map[string]any{"source": "src2"}, dir)
	if !strings.Contains(res.Error, "denied") || !strings.Contains(res.Error, "not granted for "+filepath.Join(dir, "elsewhere")) {
		t.Fatalf("rendering outside the grant: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "elsewhere")); !os.IsNotExist(err) {
		t.Fatalf("wrote outside the grant: %v", err)
	}
	res = apply(h, allowed, map[string]any{"source": "src2"}, dir)
	if res.Error != "" || !res.Changed {
		t.Fatalf("inside the grant: %+v", res)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		props map[string]any
		want  string
	}{
		{"relative name", map[string]any{"name": "out", "source": "s"}, "must be an absolute path"},
		{"unclean name", map[string]any{"name": "/tmp/../x", "source": "s"}, "canonical"},
		{"no source", map[string]any{"name": "/tmp/x"}, "source: the template directory is required"},
		{"bad engine", map[string]any{"name": "/tmp/x", "source": "s", "engine": "erb"}, `engine: must be one of "go" or "jet"`},
		{"bad ensure", map[string]any{"name": "/tmp/x", "source": "s", "ensure": "latest"}, "ensure: must be one of"},
		{"empty post command", map[string]any{"name": "/tmp/x", "source": "s", "post": []any{map[string]any{"*.go": ""}}}, "cannot be empty"},
		{"unknown property", map[string]any{"name": "/tmp/x", "source": "s", "purg": true}, `did you mean "purge"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := (&scaffoldType{}).Validate(abi.ValidateRequest{Properties: c.props})
			if !strings.Contains(strings.Join(errs, "; "), c.want) {
				t.Fatalf("want %q, got %v", c.want, errs)
			}
		})
	}
	valid := map[string]any{"name": "/tmp/x", "ensure": "absent", "source": "s", "engine": "go", "left_delimiter": "<<", "right_delimiter": ">>",
		"post": []any{map[string]any{"*.go": "go fmt {}", "*.sh": "chmod +x {}"}}, "data": map[string]any{"a": 1.0, "b": []any{"x"}}, "purge": true, "skip_empty": true}
	if errs := (&scaffoldType{}).Validate(abi.ValidateRequest{Properties: valid}); len(errs) > 0 {
		t.Fatalf("valid: %v", errs)
	}
	schematest.Accepts(t, (&scaffoldType{}).Info(), valid)
	schematest.Accepts(t, (&scaffoldType{}).Info(), map[string]any{"name": "/tmp/x", "source": "s", "data": nil, "post": nil})
}

func TestStatus(t *testing.T) {
	dir, target := converge(t, map[string]any{}, map[string]string{"a": "a"}, map[string]string{"a": "a"})
	tree(t, target, map[string]string{"extra": "x"})
	h := newHost()
	h.ReadOnly = true
	resp := (&scaffoldType{}).Status(h, abi.Request{Name: target, Properties: map[string]any{"name": target, "source": "src"}, WorkingDir: dir})
	meta := resp.State["metadata"].(map[string]any)
	if resp.Error != "" || resp.FinalEnsure != "present" || len(meta["stable"].([]any)) != 1 || len(meta["purged"].([]any)) != 1 {
		t.Fatalf("status: %+v", resp)
	}
	resp = (&scaffoldType{}).Status(h, abi.Request{Name: target, Properties: map[string]any{"name": target}})
	meta = resp.State["metadata"].(map[string]any)
	if resp.Error != "" || len(meta["files"].([]any)) != 2 {
		t.Fatalf("status without a source: %+v", resp)
	}
}

func TestNoopAbsentAndLinkReplaced(t *testing.T) {
	dir, target := converge(t, map[string]any{}, map[string]string{"a": "a", "b": "b"}, map[string]string{"a": "a", "b": "b"})
	h := newHost()
	h.ReadOnly = true
	res := apply(h, target, map[string]any{"source": "src", "ensure": "absent"}, dir)
	if res.Error != "" || !res.Changed || res.NoopMessage != "Would have removed 2 scaffold files" {
		t.Fatalf("noop absent: %+v", res)
	}
	equal(t, read(t, target), map[string]string{"a": "a", "b": "b"})

	// A symlink where a rendered file goes is replaced by the file; what
	// it pointed to is untouched.
	outside := filepath.Join(dir, "outside")
	tree(t, dir, map[string]string{"outside": "outside"})
	os.Remove(filepath.Join(target, "a"))
	if err := os.Symlink(outside, filepath.Join(target, "a")); err != nil {
		t.Fatal(err)
	}
	res = apply(newHost(), target, map[string]any{"source": "src"}, dir)
	if res.Error != "" || !res.Changed {
		t.Fatalf("apply over a link: %+v", res)
	}
	if st, err := os.Lstat(filepath.Join(target, "a")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("a is not a regular file: %v %v", st, err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "outside" {
		t.Fatalf("the link's target was written: %q", b)
	}
}

func TestJetUnknownIdentifier(t *testing.T) {
	dir := t.TempDir()
	tree(t, filepath.Join(dir, "src"), map[string]string{"x": "[[ nofunc(1) ]]"})
	res := apply(newHost(), filepath.Join(dir, "out"), map[string]any{"source": "src"}, dir)
	if !strings.Contains(res.Error, `identifier "nofunc" is not defined; scaffold templates see facts`) || strings.Contains(res.Error, "map[") {
		t.Fatalf("error: %s", res.Error)
	}
}

func TestNoopMissingSource(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out")
	h := newHost()
	h.ReadOnly = true
	p := map[string]any{"ensure": "present", "source": "later"}
	h.Properties = p
	res := (&scaffoldType{}).Apply(h, abi.Request{Type: typeName, Name: target, Properties: p, WorkingDir: dir, Noop: true})
	if !strings.Contains(res.Error, "source: "+dir+"/later is not a directory") {
		t.Fatalf("noop, nothing before: %+v", res)
	}
	res = (&scaffoldType{}).Apply(h, abi.Request{Type: typeName, Name: target, Properties: p, WorkingDir: dir, Noop: true, AfterChanges: true})
	if res.Error != "" || !res.Changed || !strings.Contains(res.NoopMessage, "an earlier change may create it") {
		t.Fatalf("noop after changes: %+v", res)
	}
}

// TestRenderTimeLimit: a loop past the render-time limit fails at its next
// tick, in both engines (the clock is set back rather than waited for).
func TestRenderTimeLimit(t *testing.T) {
	for _, c := range []struct{ engine, body string }{
		{"go", "{{ range until 1000 }}x{{ end }}"},
		{"go", "{{ range $i, $e := .data.list }}{{ range until 500 }}{{ end }}{{ end }}"},
		{"jet", "[[ range i := ints(0, 1000) ]]x[[ end ]]"},
	} {
		s, _ := parseSpec("/tmp/x", map[string]any{"source": "s", "engine": c.engine}, "")
		env := map[string]any{"data": map[string]any{"list": []any{1, 2}}, "facts": map[string]any{}, "environ": map[string]any{}}
		r := newRenderer(nil, s, "/src", "/", env)
		r.b.started = time.Now().Add(-time.Minute)
		var err error
		if c.engine == "go" {
			_, err = r.renderGo("a", c.body, env)
		} else {
			_, err = r.renderJet("a", c.body, env, "[[", "]]")
		}
		if err == nil || !strings.Contains(err.Error(), "max_render_time") {
			t.Fatalf("%s %q: want the render-time limit, got %v", c.engine, c.body, err)
		}
	}
}
