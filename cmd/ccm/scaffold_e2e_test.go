package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// files returns every regular file and symlink under dir (rel → content,
// or "-> target" for a link).
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&os.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			out[rel] = "-> " + l
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = string(b)
		return nil
	})
	return out
}

func writeTree(t *testing.T, dir string, tree map[string]string) {
	t.Helper()
	for rel, content := range tree {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sameFiles(t *testing.T, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("files:\n got %q\nwant %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: got %q, want %q", k, got[k], v)
		}
	}
}

// TestScaffoldApply: both engines, partials, data, delimiters, skip_empty,
// write, post and purge through the real binary; a second run is stable
// and changes nothing; a noop after a source edit shows the change and
// writes nothing; purge removes a link pointing outside, never what it
// points to.
func TestScaffoldApply(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"jet/_partials/head":  "# [[ data.app ]] on [[ facts.host.info.hostname != \"\" ]]\n",
		"jet/app.conf":        "[[ render(\"_partials/head\", .) ]]port = [[ data.port ]]\n[[ range i, v := data.users ]][[ v ]][[ if i < len(data.users) - 1 ]],[[ end ]][[ end ]]\n",
		"jet/empty.txt":       "[[ if false ]]never[[ end ]]\n",
		"jet/bin/run.sh":      "#!/bin/sh\necho [[ data.app ]]\n",
		"go/unit.service":     "ExecStart={{ keep }} << .data.app | upper >> << join \",\" .data.users >><< write \"extra.txt\" (printf \"%d\" .data.port) >>\n",
		"outside/keep":        "outside",
		"out-jet/stray":       "stray",
		"out-jet/sub/stray2":  "stray",
		"out-go/not-mine.txt": "kept: no purge",
	})
	if err := os.Symlink(filepath.Join(dir, "outside"), filepath.Join(dir, "out-jet", "link")); err != nil {
		t.Fatal(err)
	}
	writeManifest(t, dir, "m.yaml", `
data:
  app: demo
  port: 8080
  users: [ann, bob]
ccm:
  resources:
    - scaffold:
        - @DIR@/out-jet:
            source: jet
            skip_empty: true
            purge: true
            post:
              - "*.sh": "chmod +x {}"
        - @DIR@/out-go:
            source: go
            engine: go
            left_delimiter: "<<"
            right_delimiter: ">>"
`)
	out, res := applyJSON(t, dir, "m.yaml")
	if res.Code != 0 || out.Summary.Changed != 2 {
		t.Fatalf("first run: exit %d, %+v\n%s\n%s", res.Code, out.Summary, res.Stdout, res.Stderr)
	}
	sameFiles(t, files(t, filepath.Join(dir, "out-jet")), map[string]string{
		"app.conf":   "# demo on true\nport = 8080\nann,bob\n",
		"bin/run.sh": "#!/bin/sh\necho demo\n",
	})
	sameFiles(t, files(t, filepath.Join(dir, "out-go")), map[string]string{
		"unit.service": "ExecStart={{ keep }} DEMO ann,bob\n",
		"extra.txt":    "8080",
		"not-mine.txt": "kept: no purge",
	})
	sameFiles(t, files(t, filepath.Join(dir, "outside")), map[string]string{"keep": "outside"})
	if st, err := os.Stat(filepath.Join(dir, "out-jet", "bin", "run.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("post chmod: %v %v", st, err)
	}

	out, res = applyJSON(t, dir, "m.yaml")
	if res.Code != 0 || out.Summary.Changed != 0 || out.Summary.Stable != 2 {
		t.Fatalf("second run is not stable: exit %d, %+v\n%s", res.Code, out.Summary, res.Stdout)
	}

	writeTree(t, dir, map[string]string{"jet/app.conf": "port = [[ data.port ]]\n"})
	res = ccmtest.Run(t, dir, nil, "apply", "--noop", "m.yaml")
	if res.Code != 0 || !strings.Contains(res.Stdout, "Would have changed 1 scaffold files") || !strings.Contains(res.Stdout, "-ann,bob") {
		t.Fatalf("noop: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if got := files(t, filepath.Join(dir, "out-jet"))["app.conf"]; got != "# demo on true\nport = 8080\nann,bob\n" {
		t.Fatalf("noop wrote: %q", got)
	}
}

// TestScaffoldTemplateBomb: a loop or a doubling string in a template is
// refused under the budget with an error naming the limit, quickly, and
// nothing is written.
func TestScaffoldTemplateBomb(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"loop/a":   "[[ range i := ints(0, 1000000000) ]]x[[ end ]]",
		"repeat/a": "{{ range until 100000 }}{{ repeat 100000 \"xxxxxxxxxx\" }}{{ end }}",
		"nest/a":   strings.Repeat("[[ if true ]]", 100000) + strings.Repeat("[[ end ]]", 100000),
	})
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - scaffold:
        - @DIR@/out-loop: {source: loop}
        - @DIR@/out-repeat: {source: repeat, engine: go}
        - @DIR@/out-nest: {source: nest}
`)
	out, res := applyJSON(t, dir, "m.yaml")
	if res.Code != 1 || out.Summary.Failed != 3 {
		t.Fatalf("exit %d, %+v\n%s", res.Code, out.Summary, res.Stderr)
	}
	for ref, want := range map[string]string{
		"scaffold#" + dir + "/out-loop":   "template budget exceeded: over 1000000 loop iterations and template calls in one scaffold (max_steps)",
		"scaffold#" + dir + "/out-repeat": "template budget exceeded",
		"scaffold#" + dir + "/out-nest":   "blocks (if, range, ...) nest deeper than 1000 (max_nesting)",
	} {
		if e := out.event(t, ref); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), want) {
			t.Fatalf("%s: want %q, got %+v", ref, want, e)
		}
	}
	for _, d := range []string{"out-loop", "out-repeat", "out-nest"} {
		if _, err := os.Stat(filepath.Join(dir, d)); !os.IsNotExist(err) {
			t.Fatalf("%s exists", d)
		}
	}
}

// TestScaffoldConfinedVendor: a vendor manifest applied with
// allow_apply: false and a narrow grant renders inside its grant only:
// a target outside it and a template reading outside it are refused, and
// nothing outside is written.
func TestScaffoldConfinedVendor(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"secret":                   "s3cret",
		"vendor/tpl/ok.conf":       "port=[[ data.port ]]\n",
		"vendor/steal/stolen.conf": "[[ readFile(\"../secret\") ]]",
	})
	writeManifest(t, dir, "m.yaml", `
ccm:
  resources:
    - apply:
        - vendor/manifest.yaml:
            allow_apply: false
            grants: {fs_read: ["@DIR@/vendor/**", "@DIR@/vendor"], fs_write: ["@DIR@/vendor/out", "@DIR@/vendor/out/**"]}
            data: {port: 9090}
`)
	writeManifest(t, dir, "vendor/manifest.yaml", `
ccm:
  resources:
    - scaffold:
        - @DIR@/vendor/out: {source: tpl}
        - @DIR@/escaped: {source: tpl}
        - @DIR@/vendor/out/stolen: {source: steal}
`)
	out, res := applyJSON(t, dir, "m.yaml")
	if res.Code != 1 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if e := out.eventIn(t, "vendor/manifest.yaml", "scaffold#"+dir+"/vendor/out"); e.Failed || !e.Changed {
		t.Fatalf("inside the grant: %+v", e)
	}
	if e := out.eventIn(t, "vendor/manifest.yaml", "scaffold#"+dir+"/escaped"); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "denied") {
		t.Fatalf("outside the grant: %+v", e)
	}
	if e := out.eventIn(t, "vendor/manifest.yaml", "scaffold#"+dir+"/vendor/out/stolen"); !e.Failed || !strings.Contains(strings.Join(e.Error, " "), "fs_read not granted for "+filepath.Join(dir, "secret")) {
		t.Fatalf("reading outside the grant: %+v", e)
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped")); !os.IsNotExist(err) {
		t.Fatalf("escaped exists: %v", err)
	}
	sameFiles(t, files(t, filepath.Join(dir, "vendor", "out")), map[string]string{"ok.conf": "port=9090\n"})
}

// TestEnsureScaffold: ccm ensure scaffold and ccm status scaffold.
func TestEnsureScaffold(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"tpl/a.txt": "{{ upper \"x\" }}", "tpl/b.sh": "b", "out/stray": "s"})
	target := filepath.Join(dir, "out")
	args := []string{"ensure", "scaffold", target, "tpl", "--engine", "go", "--purge", "--post", "*.sh=chmod +x {}"}
	res := ccmtest.Run(t, dir, nil, args...)
	if res.Code != 0 || !strings.Contains(res.Stdout, "changed") {
		t.Fatalf("ensure: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	sameFiles(t, files(t, target), map[string]string{"a.txt": "X", "b.sh": "b"})
	res = ccmtest.Run(t, dir, nil, append(args, "--detailed-exitcodes")...)
	if res.Code != 0 {
		t.Fatalf("second ensure changed something: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	res = ccmtest.Run(t, dir, nil, "status", "scaffold", target)
	if res.Code != 0 || !strings.Contains(res.Stdout, "target_exists: true") || !strings.Contains(res.Stdout, filepath.Join(target, "a.txt")) {
		t.Fatalf("status: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	res = ccmtest.Run(t, dir, nil, "ensure", "scaffold", target, "tpl", "absent", "--engine", "go")
	if res.Code != 0 {
		t.Fatalf("absent: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("target left after absent: %v", err)
	}
}

// TestScaffoldSameTreeAsCCM runs one manifest under ccm and under CCM (the
// binary named by $CCM_REFERENCE_BIN; skipped without it) and compares the
// two trees: content, file types and modes, after purge and post. The
// templates avoid what CCM gets wrong (docs/decisions.md, "Scaffold"):
// Go templates read data with index, Jet templates read no facts.
func TestScaffoldSameTreeAsCCM(t *testing.T) {
	ref := os.Getenv("CCM_REFERENCE_BIN")
	if ref == "" {
		t.Skip("set CCM_REFERENCE_BIN to a CCM binary to compare trees")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"tpl/app/_partials/log":  "log_level = [[ data.level ]]\n",
		"tpl/app/app.conf":       "[[ render(\"_partials/log\", .) ]]\nport = [[ data.port ]]\n[[ range i, u := data.users ]][[ u ]] [[ end ]]\n",
		"tpl/app/empty":          "[[ if false ]]x[[ end ]]\n",
		"tpl/app/bin/run.sh":     "#!/bin/sh\necho [[ upper(data.level) ]]\n",
		"tpl/unit/README.md":     "<< index .data \"level\" | upper >> << join \",\" (index .data \"users\") >>\n<< range index .data \"users\" >><< write (printf \"%s.service\" .) (printf \"User=%s\\n\" .) >><< end >>",
		"tpl/unit/optional.conf": "<< if index .data \"nothing\" >>set<< end >>\n",
	})
	manifest := `
data: {level: info, port: 8080, users: [ann, bob]}
ccm:
  resources:
    - scaffold:
        - @OUT@/app:
            ensure: present
            source: tpl/app
            engine: jet
            skip_empty: true
            purge: true
            post:
              - "*.sh": "chmod +x {}"
        - @OUT@/unit:
            ensure: present
            source: tpl/unit
            engine: go
            left_delimiter: "<<"
            right_delimiter: ">>"
            skip_empty: true
`
	trees := map[string]string{}
	for _, who := range []string{"ccm", "ref"} {
		out := filepath.Join(dir, "out-"+who)
		writeTree(t, out, map[string]string{"app/stray": "x"})
		if err := os.Symlink(filepath.Join(dir, "tpl"), filepath.Join(out, "app", "link")); err != nil {
			t.Fatal(err)
		}
		writeManifest(t, dir, who+".yaml", strings.ReplaceAll(manifest, "@OUT@", out))
		var res ccmtest.Result
		if who == "ccm" {
			res = ccmtest.Run(t, dir, nil, "apply", who+".yaml")
		} else {
			cmd := exec.Command(ref, "apply", who+".yaml")
			cmd.Dir = dir
			b, err := cmd.CombinedOutput()
			res = ccmtest.Result{Stdout: string(b)}
			if err != nil {
				res.Code = 1
			}
		}
		if res.Code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", who, res.Code, res.Stdout, res.Stderr)
		}
		var lines []string
		_ = filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(out, p)
			line := rel + " " + info.Mode().String()
			if info.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				line += " " + string(b)
			}
			lines = append(lines, line)
			return nil
		})
		trees[who] = strings.Join(lines, "\n")
	}
	if trees["ccm"] != trees["ref"] {
		t.Fatalf("trees differ\nccm:\n%s\n\nCCM:\n%s", trees["ccm"], trees["ref"])
	}
}

// TestScaffoldManyFiles renders 300 files: enough allocation for the
// plugin's garbage collector to run mid-call, which once closed the stdio
// transport's stdout (the finalizer of the replaced os.Stdout) and failed
// the apply with "write output to stdout: Bad file number".
func TestScaffoldManyFiles(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{}
	for i := 0; i < 300; i++ {
		tree[filepath.Join("tpl", "d"+strings.Repeat("x", i%3), "f"+strings.Repeat("y", i/3)+".conf")] = "port=[[ data.port ]]\n"
	}
	writeTree(t, dir, tree)
	writeManifest(t, dir, "m.yaml", `
data: {port: 1}
ccm:
  resources:
    - scaffold:
        - @DIR@/out: {source: tpl}
`)
	for i, want := range []int{1, 0} {
		out, res := applyJSON(t, dir, "m.yaml")
		if res.Code != 0 || out.Summary.Changed != want {
			t.Fatalf("run %d: exit %d, %+v\n%s\n%s", i+1, res.Code, out.Summary, res.Stdout, res.Stderr)
		}
	}
	if n := len(files(t, filepath.Join(dir, "out"))); n != 300 {
		t.Fatalf("%d files rendered, want 300", n)
	}
}
