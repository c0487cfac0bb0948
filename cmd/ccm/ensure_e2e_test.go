package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"github.com/ccm-dev/ccm/runtime/manifest"
	"github.com/ccm-dev/ccm/runtime/session"
)

// ensureCase is one ccm invocation and what it must produce. In args,
// env and the wanted strings, @DIR@ is the case's directory.
type ensureCase struct {
	name   string
	setup  map[string]string // files to write under @DIR@ first
	env    []string
	args   []string
	code   int
	stdout []string // substrings of stdout
	stderr []string // substrings of stderr
	check  func(t *testing.T, dir string)
}

func (tc ensureCase) run(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	r := strings.NewReplacer("@DIR@", dir)
	for name, content := range tc.setup {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(r.Replace(content)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var args, env []string
	for _, a := range tc.args {
		args = append(args, r.Replace(a))
	}
	for _, e := range tc.env {
		env = append(env, r.Replace(e))
	}
	res := ccmtest.Run(t, dir, env, args...)
	if res.Code != tc.code {
		t.Fatalf("ccm %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.Code, tc.code, res.Stdout, res.Stderr)
	}
	for _, s := range tc.stdout {
		if !strings.Contains(res.Stdout, r.Replace(s)) {
			t.Errorf("stdout lacks %q:\n%s", r.Replace(s), res.Stdout)
		}
	}
	for _, s := range tc.stderr {
		if !strings.Contains(res.Stderr, r.Replace(s)) {
			t.Errorf("stderr lacks %q:\n%s", r.Replace(s), res.Stderr)
		}
	}
	if tc.check != nil {
		tc.check(t, dir)
	}
}

func fileIs(name, content string, mode os.FileMode) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != content {
			t.Errorf("%s = %q, want %q", name, b, content)
		}
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != mode {
			t.Errorf("%s mode = %o, want %o", name, fi.Mode().Perm(), mode)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
			t.Errorf("%s owned by %d:%d, want the invoking user %d:%d", name, st.Uid, st.Gid, os.Getuid(), os.Getgid())
		}
	}
}

func absent(name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", name, err)
		}
	}
}

func TestEnsureFile(t *testing.T) {
	t.Parallel()
	u, g := me(t)
	tests := []ensureCase{
		{name: "create with template content, default owner and mode",
			args:   []string{"ensure", "file", "@DIR@/a", "--content", "hi {{ Facts.user.name }}\n"},
			stdout: []string{"WARN  file#@DIR@/a changed ensure=present", "provider=posix"},
			check:  fileIs("a", "hi "+u+"\n", 0o644)},
		{name: "stable when converged", setup: map[string]string{"a": "x"},
			args:   []string{"ensure", "file", "@DIR@/a", "present", "--content", "x", "--owner", u, "--group", g, "--mode", "0644", "--detailed-exitcodes"},
			stdout: []string{"INFO  file#@DIR@/a stable"}},
		{name: "detailed exit code for a change",
			args: []string{"ensure", "--detailed-exitcodes", "file", "@DIR@/a", "--content", "x"}, code: 2},
		{name: "owner USER:GROUP", args: []string{"ensure", "file", "@DIR@/a", "--owner", u + ":" + g, "--mode", "0600", "--content", ""},
			check: fileIs("a", "", 0o600)},
		{name: "owner and group disagree", args: []string{"ensure", "file", "@DIR@/a", "--owner", u + ":" + g, "--group", "other"}, code: 2,
			stderr: []string{"name different groups"}, check: absent("a")},
		{name: "content-file is template-expanded", setup: map[string]string{"in.tmpl": "say {{ Data.word }}\n", ".hiera": "data:\n  word: hello\n"},
			args: []string{"ensure", "file", "@DIR@/a", "--content-file", "in.tmpl"}, check: fileIs("a", "say hello\n", 0o644)},
		{name: "source is copied verbatim", setup: map[string]string{"src": "{{ Data.word }}\n"},
			args: []string{"ensure", "file", "@DIR@/a", "--source", "src"}, check: fileIs("a", "{{ Data.word }}\n", 0o644)},
		{name: "content and source are exclusive", setup: map[string]string{"src": "x"},
			args: []string{"ensure", "file", "@DIR@/a", "--source", "src", "--content", "y"}, code: 2, stderr: []string{"[content source]"}, check: absent("a")},
		{name: "directory gets 0755", args: []string{"ensure", "file", "@DIR@/d", "directory"},
			check: func(t *testing.T, dir string) {
				if fi, err := os.Stat(filepath.Join(dir, "d")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
					t.Fatalf("d = %v, %v", fi, err)
				}
			}},
		{name: "absent", setup: map[string]string{"a": "x"}, args: []string{"ensure", "file", "@DIR@/a", "absent"}, check: absent("a"),
			stdout: []string{"changed ensure=absent"}},
		{name: "noop changes nothing", args: []string{"ensure", "file", "--noop", "@DIR@/a", "--content", "x"},
			stdout: []string{`noop="Would have created the file"`}, check: absent("a")},
		{name: "templated name", setup: map[string]string{".hiera": "data:\n  name: b\n"},
			args: []string{"ensure", "file", "@DIR@/{{ Data.name }}", "--content", "x"}, stdout: []string{"file#@DIR@/b changed"}, check: fileIs("b", "x", 0o644)},
		{name: "--hiera file", setup: map[string]string{"h.yaml": "data:\n  word: from-flag\n", ".hiera": "data:\n  word: default\n"},
			args: []string{"ensure", "file", "@DIR@/a", "--content", "{{ Data.word }}", "--hiera", "h.yaml"}, check: fileIs("a", "from-flag", 0o644)},
		{name: "CCM_HIERA_DATA", setup: map[string]string{"h.yaml": "data:\n  word: from-env\n"}, env: []string{"CCM_HIERA_DATA=@DIR@/h.yaml"},
			args: []string{"ensure", "file", "@DIR@/a", "--content", "{{ Data.word }}"}, check: fileIs("a", "from-env", 0o644)},
		{name: "missing --hiera file", args: []string{"ensure", "file", "@DIR@/a", "--hiera", "nope.yaml"}, code: 2,
			stderr: []string{"--hiera", "nope.yaml"}, check: absent("a")},
		{name: "hiera resolves against facts", setup: map[string]string{".hiera": "hierarchy:\n  order: [\"user:${ lookup('facts.user.name') }\"]\ndata:\n  word: base\noverrides:\n  \"user:" + u + "\":\n    word: mine\n"},
			args: []string{"ensure", "file", "@DIR@/a", "--content", "{{ Data.word }}"}, check: fileIs("a", "mine", 0o644)},
		{name: ".env is read", setup: map[string]string{".env": "GREETING=dotenv\n"},
			args: []string{"ensure", "file", "@DIR@/a", "--content", "{{ Environ.GREETING }}"}, check: fileIs("a", "dotenv", 0o644)},
		{name: "--no-read-env", setup: map[string]string{".env": "GREETING=dotenv\n"},
			args: []string{"ensure", "--no-read-env", "file", "@DIR@/a", "--content", "[{{ Environ.GREETING ?? 'unset' }}]"}, check: fileIs("a", "[unset]", 0o644)},
		{name: "--no-read-env: a missing variable fails the resource", setup: map[string]string{".env": "GREETING=dotenv\n"},
			args: []string{"ensure", "--no-read-env", "file", "@DIR@/a", "--content", "[{{ Environ.GREETING }}]"}, code: 1, stdout: []string{`Environ has no key \"GREETING\"`}, check: absent("a")},
		{name: "alias", args: []string{"ensure", "file", "@DIR@/a", "--alias", "conf"}, stdout: []string{"file#conf (alias) changed"}},
		{name: "if false skips", args: []string{"ensure", "file", "@DIR@/a", "--if", `Facts.user.name == "nobody-at-all"`},
			stdout: []string{"WARN  file#@DIR@/a skipped"}, check: absent("a")},
		{name: "unless true skips", args: []string{"ensure", "file", "@DIR@/a", "--unless", "true"}, stdout: []string{"skipped"}, check: absent("a")},
		{name: "bad if expression fails", args: []string{"ensure", "file", "@DIR@/a", "--if", "1 +"}, code: 1, stdout: []string{"control.if"}, check: absent("a")},
		{name: "provider", args: []string{"ensure", "file", "@DIR@/a", "--provider", "posix"}, stdout: []string{"provider=posix"}},
		{name: "unknown provider", args: []string{"ensure", "file", "@DIR@/a", "--provider", "nfs"}, code: 2, stderr: []string{"nfs"}, check: absent("a")},
		{name: "health check ok", args: []string{"ensure", "file", "@DIR@/a", "--check", "/usr/bin/test -f @DIR@/a"}, stdout: []string{"changed"}},
		{name: "health check critical fails", args: []string{"ensure", "file", "@DIR@/a", "--check", "/bin/sh -c 'exit 2'", "--check-tries", "2", "--check-sleep", "10ms"},
			code: 1, stdout: []string{"ERROR file#@DIR@/a failed", "critical"}},
		{name: "bad check-sleep", args: []string{"ensure", "file", "@DIR@/a", "--check", "/bin/true", "--check-sleep", "soon"}, code: 2,
			stderr: []string{"try_sleep"}, check: absent("a")},
		{name: "invalid mode", args: []string{"ensure", "file", "@DIR@/a", "--mode", "1777"}, code: 2,
			stderr: []string{"ccm: error: ccm ensure file: file#@DIR@/a: mode \"1777\""}, check: absent("a")},
		{name: "relative name", args: []string{"ensure", "file", "a"}, code: 2, stderr: []string{"file#a"}, check: absent("a")},
		{name: "too many arguments", args: []string{"ensure", "file", "a", "b", "c"}, code: 2, stderr: []string{"NAME [ENSURE]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

func TestEnsureExec(t *testing.T) {
	t.Parallel()
	tests := []ensureCase{
		{name: "runs", args: []string{"ensure", "exec", "/usr/bin/touch @DIR@/ran"}, stdout: []string{"WARN  exec#/usr/bin/touch @DIR@/ran changed"},
			check: func(t *testing.T, dir string) { fileMustExist(t, dir, "ran") }},
		{name: "failure exits 1", args: []string{"ensure", "exec", "/bin/false"}, code: 1, stdout: []string{"ERROR exec#/bin/false failed", "errors="}},
		{name: "returns", args: []string{"ensure", "exec", "/bin/false", "--returns", "1", "--returns", "0"}, stdout: []string{"changed"}},
		{name: "creates", setup: map[string]string{"there": ""}, args: []string{"ensure", "exec", "/bin/false", "--creates", "@DIR@/there"}, stdout: []string{"INFO  exec#/bin/false stable"}},
		{name: "timeout", args: []string{"ensure", "exec", "/bin/sleep 5", "--timeout", "200ms"}, code: 1, stdout: []string{"failed"}},
		{name: "cwd, environment, path and logoutput",
			args:   []string{"ensure", "exec", `sh -c "pwd; echo $GREETING"`, "--cwd", "@DIR@", "-e", "GREETING=hello", "--path", "/bin:/usr/bin", "--logoutput"},
			stdout: []string{"@DIR@", "hello"}},
		{name: "shell provider", args: []string{"ensure", "exec", "echo a > @DIR@/out", "--provider", "shell"},
			check: func(t *testing.T, dir string) { fileMustExist(t, dir, "out") }},
		{name: "exec-if false skips", args: []string{"ensure", "exec", "/usr/bin/touch @DIR@/ran", "--exec-if", "/bin/false"},
			check: func(t *testing.T, dir string) { absent("ran")(t, dir) }},
		{name: "exec-unless true skips", args: []string{"ensure", "exec", "/usr/bin/touch @DIR@/ran", "--exec-unless", "/bin/true"},
			check: func(t *testing.T, dir string) { absent("ran")(t, dir) }},
		{name: "refresh-only without a change does not run", args: []string{"ensure", "exec", "/usr/bin/touch @DIR@/ran", "--refresh-only"},
			check: func(t *testing.T, dir string) { absent("ran")(t, dir) }},
		{name: "subscribe without a session fails", args: []string{"ensure", "exec", "/bin/true", "-S", "file#/etc/hostname"}, code: 1,
			stdout: []string{"unknown subscription file#/etc/hostname"}},
		{name: "require without a session is a usage error", args: []string{"ensure", "exec", "/bin/true", "--require", "file#/etc/hostname"}, code: 2,
			stderr: []string{"--require needs a session", "ccm session new"}},
		{name: "noop", args: []string{"ensure", "exec", "/usr/bin/touch @DIR@/ran", "--noop"}, stdout: []string{`noop="Would have executed"`},
			check: func(t *testing.T, dir string) { absent("ran")(t, dir) }},
		{name: "one command only", args: []string{"ensure", "exec", "/bin/true", "x"}, code: 2, stderr: []string{"quote it"}},
		{name: "a variable that loads code needs --grants", args: []string{"ensure", "exec", "/bin/true", "-e", "LD_PRELOAD=/nonexistent.so"}, code: 1,
			stdout: []string{`LD_PRELOAD can make the program load or run other code; it runs only with an env entry \"LD_PRELOAD\"`}},
		{name: "--grants names it", setup: map[string]string{"g.yaml": "fs_read: [/**]\nexec: [/**]\nenv: [LD_LIBRARY_PATH=/nonexistent, \"*\"]\n"},
			args: []string{"ensure", "exec", "/bin/true", "-e", "LD_LIBRARY_PATH=/nonexistent", "--grants", "@DIR@/g.yaml"}, stdout: []string{"changed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

func fileMustExist(t *testing.T, dir, name string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureOtherTypes(t *testing.T) {
	t.Parallel()
	tests := []ensureCase{
		{name: "archive bad checksum", args: []string{"ensure", "archive", "/tmp/x.tgz", "https://example.com/x.tgz", "--checksum", "abc"}, code: 2,
			stderr: []string{"archive#/tmp/x.tgz", `checksum "abc" must be a sha256`}},
		{name: "archive needs FILE URL", args: []string{"ensure", "archive", "/tmp/x.tgz"}, code: 2, stderr: []string{"takes FILE URL"}},
		{name: "scaffold needs a source", args: []string{"ensure", "scaffold", "/tmp/x"}, code: 2, stderr: []string{"scaffold#/tmp/x", "source: the template directory is required"}},
		{name: "package needs a name", args: []string{"ensure", "pkg"}, code: 2, stderr: []string{"NAME [ENSURE]"}},
		{name: "package invalid name", args: []string{"ensure", "pkg", "bad name;"}, code: 2, stderr: []string{"package#bad name;"}},
		{name: "package ensure that is no version", args: []string{"ensure", "pkg", "hello", "sideways"}, code: 2, stderr: []string{"package#hello", `ensure "sideways" is not present, absent, latest or a version`}},
		{name: "service invalid ensure", args: []string{"ensure", "service", "web", "sideways"}, code: 2, stderr: []string{"service#web"}},
		{name: "service enable and disable are exclusive", args: []string{"ensure", "svc", "hello", "--enable", "--disable"}, code: 2, stderr: []string{"[disable enable]"}},
		{name: "unknown type", args: []string{"ensure", "mount", "/x"}, code: 2, stderr: []string{`unknown resource type "mount"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

// TestEnsureServiceFake drives ensure service (and its flags) against the
// fake systemctl.
func TestEnsureServiceFake(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		state  string
		args   []string
		code   int
		calls  []string
		stdout string
	}{
		{name: "start and enable", state: "inactive disabled", args: []string{"--enable"},
			calls: []string{"start --system -- web", "enable --system -- web"}, stdout: "WARN  service#web changed ensure=running"},
		{name: "stop and disable", state: "active enabled", args: []string{"stopped", "--disable"},
			calls: []string{"stop --system -- web", "disable --system -- web"}},
		{name: "stable", state: "active enabled", args: nil, stdout: "INFO  service#web stable"},
		{name: "noop", state: "inactive enabled", args: []string{"--noop"}, stdout: `noop="Would have started"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			state, env := ccmtest.FakeSystemctl(t, map[string]string{"web": tc.state})
			res := ccmtest.Run(t, t.TempDir(), env, append([]string{"ensure", "service", "web"}, tc.args...)...)
			if res.Code != tc.code || !strings.Contains(res.Stdout, tc.stdout) {
				t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
			}
			var got []string
			for _, c := range ccmtest.Calls(t, state) {
				if !strings.HasPrefix(c, "is-") && !strings.HasPrefix(c, "show ") && !strings.HasPrefix(c, "daemon-reload") {
					got = append(got, c)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.calls, "|") {
				t.Fatalf("mutating calls = %q, want %q", got, tc.calls)
			}
		})
	}
}

// sessionEnvFor starts a session in a temp dir and returns the environment
// that selects it.
func sessionEnvFor(t *testing.T) (string, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "session")
	res := ccmtest.Run(t, t.TempDir(), nil, "session", "new", "--directory", dir)
	if res.Code != 0 || res.Stdout != "export CCM_SESSION_STORE="+dir+"\n" {
		t.Fatalf("session new: exit %d, stdout %q, stderr %s", res.Code, res.Stdout, res.Stderr)
	}
	return dir, []string{"CCM_SESSION_STORE=" + dir}
}

type sessionJSON struct {
	Session string `json:"session"`
	Summary struct {
		Total     int `json:"total_resources"`
		Unique    int `json:"unique_resources"`
		Stable    int `json:"stable_resources"`
		Changed   int `json:"changed_resources"`
		Failed    int `json:"failed_resources"`
		Skipped   int `json:"skipped_resources"`
		Refreshed int `json:"refreshed_resources"`
	} `json:"summary"`
	Events []*session.Event `json:"events"`
}

func sessionReport(t *testing.T, env []string, args ...string) (sessionJSON, ccmtest.Result) {
	t.Helper()
	res := ccmtest.Run(t, t.TempDir(), env, append([]string{"session", "report", "--json"}, args...)...)
	var out sessionJSON
	if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil {
		t.Fatalf("session report --json: %v\n%s\n%s", err, res.Stdout, res.Stderr)
	}
	return out, res
}

// TestEnsureSession walks a script's worth of ensures through one session:
// require and subscribe see earlier processes' events, and the report adds
// them up.
func TestEnsureSession(t *testing.T) {
	t.Parallel()
	sdir, env := sessionEnvFor(t)
	work := t.TempDir()
	conf := filepath.Join(work, "app.conf")
	steps := []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"ensure", "file", conf, "--content", "v1"}, 0, "changed"},
		{[]string{"ensure", "exec", "/usr/bin/touch " + work + "/reloaded", "--refresh-only", "--subscribe", "file#" + conf}, 0, "refreshed"},
		{[]string{"ensure", "exec", "/bin/false", "--alias", "broken"}, 1, "failed"},
		{[]string{"ensure", "exec", "/usr/bin/touch " + work + "/after", "--require", "exec#broken"}, 0, "skipped due to unmet requirement"},
		{[]string{"ensure", "exec", "/usr/bin/touch " + work + "/after", "--require", "file#" + conf}, 0, "changed"},
		{[]string{"ensure", "exec", "/bin/true", "--require", "file#/never/ensured"}, 1, "unknown requirement"},
		// Noop events are recorded too.
		{[]string{"ensure", "--noop", "file", conf, "--content", "v2"}, 0, "Would have"},
	}
	for i, st := range steps {
		res := ccmtest.Run(t, work, env, st.args...)
		if res.Code != st.code || !strings.Contains(res.Stdout, st.stdout) {
			t.Fatalf("step %d %v: exit %d (want %d), stdout:\n%s\nstderr:\n%s", i, st.args, res.Code, st.code, res.Stdout, res.Stderr)
		}
	}
	fileMustExist(t, work, "reloaded")
	fileMustExist(t, work, "after")

	rep, res := sessionReport(t, env)
	if res.Code != 1 {
		t.Fatalf("report with a failed resource: exit %d, want 1", res.Code)
	}
	s := rep.Summary
	if s.Total != 7 || s.Unique != 5 || s.Failed != 2 || s.Skipped != 1 || s.Refreshed != 1 || s.Changed != 4 || len(rep.Events) != 7 || rep.Session != sdir {
		t.Fatalf("report = %+v (%d events)", rep.Summary, len(rep.Events))
	}
	text := ccmtest.Run(t, work, nil, "session", "report", "--session", sdir)
	for _, line := range []string{"Session Summary", "Run Time: ", "Total Resources: 7", "Unique Resources: 5", "Failed Resources: 2", "Total Errors: 2"} {
		if !strings.Contains(text.Stdout, line) {
			t.Errorf("report lacks %q:\n%s", line, text.Stdout)
		}
	}
	// The session is not in the temp dir root's direct reach only when
	// TMPDIR points elsewhere; t.TempDir is inside os.TempDir, so it goes.
	res = ccmtest.Run(t, work, env, "session", "report", "--remove")
	if _, err := os.Stat(sdir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("--remove left %s (exit %d, %s)", sdir, res.Code, res.Stderr)
	}
}

func TestSessionErrors(t *testing.T) {
	t.Parallel()
	existing := t.TempDir()
	// "Outside the temp dir" must hold wherever the checkout lives (CI
	// clones into /tmp): ccm gets its own TMPDIR, and outside is beside it.
	base := t.TempDir()
	tmpEnv := []string{"TMPDIR=" + filepath.Join(base, "tmp")}
	if err := os.Mkdir(filepath.Join(base, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside")
	if res := ccmtest.Run(t, ".", tmpEnv, "session", "start", "--directory", outside); res.Code != 0 {
		t.Fatalf("session start: %d %s", res.Code, res.Stderr)
	}
	tests := []ensureCase{
		{name: "new in an existing directory", args: []string{"session", "create", "--directory", existing}, code: 2, stderr: []string{"already exists"}},
		{name: "report without a session", args: []string{"session", "report"}, code: 2, stderr: []string{"no session"}},
		{name: "report of a missing session", args: []string{"session", "report", "--session", "@DIR@/nope"}, code: 2, stderr: []string{"does not exist"}},
		{name: "empty CCM_SESSION_STORE for ensure", env: []string{"CCM_SESSION_STORE="}, args: []string{"ensure", "exec", "/bin/true"}, code: 2, stderr: []string{"set but empty"}},
		{name: "empty --session", args: []string{"ensure", "--session", "", "exec", "/bin/true"}, code: 2, stderr: []string{"--session is empty"}},
		{name: "ensure with a missing session", args: []string{"ensure", "exec", "/bin/true", "--session", "@DIR@/nope"}, code: 2, stderr: []string{"does not exist"}},
		{name: "corrupt event file", setup: map[string]string{"bad.event": "{"}, args: []string{"ensure", "--session", "@DIR@", "exec", "/bin/true"}, code: 2,
			stderr: []string{"@DIR@/bad.event", "invalid event file"}},
		{name: "remove outside the temp dir is refused", env: tmpEnv, args: []string{"session", "report", "--session", outside, "--remove"}, code: 2,
			stdout: []string{"Session Summary"}, stderr: []string{"refusing to remove", "not inside the temporary directory"},
			check: func(t *testing.T, _ string) { fileMustExist(t, outside, ".") }},
		{name: "report of an empty session", env: tmpEnv, args: []string{"session", "report", "--session", outside}, stdout: []string{"Total Resources: 0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

// TestSessionNewDefault checks the default directory and that the printed
// line works with eval in a real shell.
func TestSessionNewDefault(t *testing.T) {
	t.Parallel()
	bin := ccmtest.Binary(t)
	cmd := exec.Command("/bin/sh", "-c", `eval "$("$CCM" session new)" && printf %s "$CCM_SESSION_STORE"`)
	cmd.Env = append(os.Environ(), "CCM="+bin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := string(out)
	t.Cleanup(func() { os.RemoveAll(dir) })
	if filepath.Dir(dir) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(dir), "ccm-session-") {
		t.Fatalf("session dir = %q", dir)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.event")); len(files) != 1 {
		t.Fatalf("want one start event, got %v", files)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/ccm-session-123": "/tmp/ccm-session-123",
		"/tmp/a b":             "'/tmp/a b'",
		"/tmp/it's":            `'/tmp/it'\''s'`,
		"/tmp/$(x)":            "'/tmp/$(x)'",
		"":                     "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestEnsureParallelProcesses runs N ccm processes at once, each ensuring
// its own file in one session; the report must count all N.
func TestEnsureParallelProcesses(t *testing.T) {
	t.Parallel()
	const n = 8
	sdir, env := sessionEnvFor(t)
	work := t.TempDir()
	var wg sync.WaitGroup
	results := make([]ccmtest.Result, n)
	for i := range n {
		wg.Go(func() {
			results[i] = ccmtest.Run(t, work, env, "ensure", "file", filepath.Join(work, fmt.Sprintf("f%d", i)), "--content", fmt.Sprint(i))
		})
	}
	wg.Wait()
	for i, res := range results {
		if res.Code != 0 {
			t.Fatalf("process %d: exit %d\n%s\n%s", i, res.Code, res.Stdout, res.Stderr)
		}
	}
	rep, res := sessionReport(t, env)
	if res.Code != 0 || rep.Summary.Total != n || rep.Summary.Unique != n || rep.Summary.Changed != n {
		t.Fatalf("report: exit %d, %+v", res.Code, rep.Summary)
	}
	if left, _ := filepath.Glob(filepath.Join(sdir, ".tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// runStdin runs ccm with stdin, like ccmtest.Run.
func runStdin(t *testing.T, dir string, env []string, stdin string, args ...string) ccmtest.Result {
	t.Helper()
	cmd := exec.Command(ccmtest.Binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"CCM_CACHE_DIR=" + filepath.Join(os.TempDir(), "ccmtest-cache"),
		"CCM_BACKGROUND_COMPILE=0",
		"NO_COLOR=1",
	}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := ccmtest.Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return res
}

const reqProto = `"protocol": "io.choria.ccm.v1.resource.ensure.request"`

func TestEnsureAPIPipe(t *testing.T) {
	t.Parallel()
	u, g := me(t)
	tests := []struct {
		name    string
		stdin   string
		args    []string
		files   map[string]string
		code    int
		yaml    bool
		error   string // wanted in the error response; "" = a state response
		failed  bool
		changed bool
		check   func(t *testing.T, dir string, ev *session.Event)
	}{
		{name: "json file", stdin: `{` + reqProto + `, "type": "file", "properties": {"name": "@DIR@/a", "content": "hi\n", "owner": "` + u + `", "group": "` + g + `", "mode": "0640"}}`,
			changed: true, check: func(t *testing.T, dir string, ev *session.Event) {
				fileIs("a", "hi\n", 0o640)(t, dir)
				if ev.Protocol != session.Protocol || ev.Type != "file" || ev.FinalEnsure != "present" || ev.Duration <= 0 || ev.Status["protocol"] != "io.choria.ccm.v1.resource.file.state" {
					t.Fatalf("event = %+v", ev)
				}
			}},
		{name: "yaml request, yaml response", yaml: true, args: []string{"--yaml"},
			stdin: "protocol: io.choria.ccm.v1.resource.ensure.request\ntype: exec\nproperties:\n  name: /usr/bin/touch @DIR@/ran\n", changed: true,
			check: func(t *testing.T, dir string, _ *session.Event) { fileMustExist(t, dir, "ran") }},
		{name: "alias piped, failed resource is a state", args: []string{"--no-yaml"}, stdin: `{` + reqProto + `, "type": "exec", "properties": {"name": "/bin/false"}}`,
			code: 1, failed: true},
		{name: "noop", args: []string{"--noop"}, stdin: `{` + reqProto + `, "type": "exec", "properties": {"name": "/usr/bin/touch @DIR@/ran"}}`, changed: true,
			check: func(t *testing.T, dir string, ev *session.Event) {
				absent("ran")(t, dir)
				if !ev.Noop || ev.NoopMessage == "" {
					t.Fatalf("event = %+v", ev)
				}
			}},
		{name: "common properties", stdin: `{` + reqProto + `, "type": "exec", "properties": {"name": "/bin/true", "alias": "t", "control": {"if": "false"}}}`,
			check: func(t *testing.T, _ string, ev *session.Event) {
				if !ev.Skipped || ev.Alias != "t" {
					t.Fatalf("event = %+v", ev)
				}
			}},
		{name: "health check", stdin: `{` + reqProto + `, "type": "exec", "properties": {"name": "/bin/true", "health_checks": [{"command": "/bin/sh -c 'exit 1'"}]}}`,
			changed: true, check: func(t *testing.T, _ string, ev *session.Event) {
				if len(ev.HealthCheck) != 1 || ev.HealthCheck[0].Status != "warning" {
					t.Fatalf("checks = %+v", ev.HealthCheck)
				}
			}},
		{name: "facts and data files", args: []string{"--facts", "@DIR@/facts.yaml", "--data", "@DIR@/data.json"},
			files:   map[string]string{"facts.yaml": "site: lon\n", "data.json": `{"word": "hello"}`},
			stdin:   `{` + reqProto + `, "type": "file", "properties": {"name": "@DIR@/a", "content": "{{ Data.word }} {{ Facts.site }}", "owner": "` + u + `", "group": "` + g + `", "mode": "0644"}}`,
			changed: true, check: func(t *testing.T, dir string, _ *session.Event) { fileIs("a", "hello lon", 0o644)(t, dir) }},
		{name: "unknown property", stdin: `{` + reqProto + `, "type": "file", "properties": {"name": "@DIR@/a", "colour": "red"}}`, code: 2, error: `unknown property "colour"`},
		{name: "unknown request key", stdin: `{` + reqProto + `, "type": "exec", "properties": {"name": "/bin/true"}, "noop": true}`, code: 2, error: "unknown keys noop"},
		{name: "wrong protocol", stdin: `{"protocol": "x", "type": "exec", "properties": {"name": "/bin/true"}}`, code: 2, error: `protocol "x"`},
		{name: "no type", stdin: `{` + reqProto + `, "properties": {"name": "/bin/true"}}`, code: 2, error: "type is required"},
		{name: "no properties", stdin: `{` + reqProto + `, "type": "exec"}`, code: 2, error: "properties are required"},
		{name: "no name", stdin: `{` + reqProto + `, "type": "exec", "properties": {}}`, code: 2, error: "non-empty name"},
		{name: "unknown type", stdin: `{` + reqProto + `, "type": "nosuch", "properties": {"name": "x"}}`, code: 2, error: "unknown resource type"},
		{name: "apply", stdin: `{` + reqProto + `, "type": "apply", "properties": {"name": "x.yaml"}}`, code: 2, error: "use ccm apply"},
		{name: "bad json", stdin: `{"protocol": `, code: 2, error: "invalid JSON"},
		{name: "bad yaml", stdin: "protocol: [", code: 2, error: "invalid YAML"},
		{name: "empty", stdin: "", code: 2, error: "want a YAML map"},
		{name: "require without session", stdin: `{` + reqProto + `, "type": "exec", "properties": {"name": "/bin/true", "require": ["exec#x"]}}`, code: 2, error: "needs a session"},
		{name: "yaml error response", args: []string{"--yaml"}, yaml: true, stdin: `{"protocol": "x"}`, code: 2, error: "protocol"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := strings.NewReplacer("@DIR@", dir)
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var args []string
			for _, a := range append([]string{"ensure", "api", "pipe"}, tc.args...) {
				args = append(args, r.Replace(a))
			}
			if strings.Contains(tc.name, "piped") {
				args[2] = "piped"
			}
			res := runStdin(t, dir, nil, r.Replace(tc.stdin), args...)
			if res.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.Code, tc.code, res.Stdout, res.Stderr)
			}
			var resp struct {
				Protocol string         `json:"protocol"`
				Error    string         `json:"error"`
				State    *session.Event `json:"state"`
			}
			body := []byte(res.Stdout)
			if tc.yaml {
				if strings.HasPrefix(strings.TrimSpace(res.Stdout), "{") {
					t.Fatalf("--yaml printed JSON:\n%s", res.Stdout)
				}
				if body = yamlToJSON(t, body); body == nil {
					return
				}
			}
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatalf("response: %v\n%s", err, res.Stdout)
			}
			if resp.Protocol != "io.choria.ccm.v1.resource.ensure.response" {
				t.Fatalf("protocol = %q", resp.Protocol)
			}
			if tc.error != "" {
				if resp.State != nil || !strings.Contains(resp.Error, tc.error) {
					t.Fatalf("response = %s, want error %q", res.Stdout, tc.error)
				}
				return
			}
			if resp.Error != "" || resp.State == nil {
				t.Fatalf("response = %s, want a state", res.Stdout)
			}
			if resp.State.Failed != tc.failed || resp.State.Changed != tc.changed {
				t.Fatalf("state failed=%v changed=%v, want %v %v\n%s", resp.State.Failed, resp.State.Changed, tc.failed, tc.changed, res.Stdout)
			}
			if tc.check != nil {
				tc.check(t, dir, resp.State)
			}
		})
	}
}

// TestEnsureAPIPipeSession: a request's require sees an earlier ensure's
// event, and its own event lands in the session.
func TestEnsureAPIPipeSession(t *testing.T) {
	t.Parallel()
	_, env := sessionEnvFor(t)
	work := t.TempDir()
	if res := ccmtest.Run(t, work, env, "ensure", "exec", "/bin/false", "--alias", "bad"); res.Code != 1 {
		t.Fatalf("exit %d", res.Code)
	}
	res := runStdin(t, work, env, `{`+reqProto+`, "type": "exec", "properties": {"name": "/bin/true", "require": ["exec#bad"]}}`, "ensure", "api", "pipe")
	if res.Code != 0 || !strings.Contains(res.Stdout, `"unmet_requirements": [`) {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	rep, _ := sessionReport(t, env)
	if rep.Summary.Total != 2 || rep.Summary.Skipped != 1 {
		t.Fatalf("report = %+v", rep.Summary)
	}
}

// yamlToJSON converts a YAML response with the yaml decoder ccm uses.
func yamlToJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	v, err := decodeYAMLForTest(b)
	if err != nil {
		t.Fatalf("response is not YAML: %v\n%s", err, b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeYAMLForTest(b []byte) (any, error) { return manifest.DecodeValue(b, "response") }

// TestEnsureShellScript runs docs/shell.md's shell-script pattern with /bin/bash
// and the built ccm on PATH: a real package (Debian's small "hello", with
// the real apt, as root) and a service under the fake systemctl. The second
// run of the script must be stable and must not restart the service.
func TestEnsureShellScript(t *testing.T) {
	needHelloToInstall(t)

	work := t.TempDir()
	conf := filepath.Join(work, "listen.conf")
	script := filepath.Join(work, "deploy.sh")
	if err := os.WriteFile(script, []byte(`set -e
eval "$(ccm session new)"
ccm ensure package hello
ccm ensure file `+conf+` --content "Listen 8080" --require package#hello
ccm ensure service hello --subscribe file#`+conf+`
ccm session report --remove
echo "session was $CCM_SESSION_STORE"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	state, fakeEnv := ccmtest.FakeSystemctl(t, map[string]string{"hello": "active enabled"})
	bin := ccmtest.Binary(t)
	// Sessions go to a temp dir of the test's own, so a failed run leaves
	// nothing behind; --remove works there since TMPDIR is os.TempDir().
	tmp := t.TempDir()
	run := func() string {
		t.Helper()
		cmd := exec.Command("/bin/bash", script)
		cmd.Dir = work
		cmd.Env = append([]string{
			"PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH"),
			"HOME=" + os.Getenv("HOME"),
			"CCM_CACHE_DIR=" + filepath.Join(os.TempDir(), "ccmtest-cache"),
			"CCM_BACKGROUND_COMPILE=0",
			"NO_COLOR=1",
			"TMPDIR=" + tmp,
		}, fakeEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("script failed: %v\n%s", err, out)
		}
		return string(out)
	}

	out := run()
	for _, want := range []string{
		"WARN  package#hello changed ensure=",
		"WARN  file#" + conf + " changed ensure=present",
		"WARN  service#hello refreshed ensure=running",
		"Session Summary", "Total Resources: 3", "Changed Resources: 3", "Refreshed Resources: 1", "Failed Resources: 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first run lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(conf); err != nil || string(b) != "Listen 8080" {
		t.Fatalf("%s = %q, %v", conf, b, err)
	}
	if !slicesContains(ccmtest.Calls(t, state), "restart --system -- hello") {
		t.Fatalf("service not restarted: %v", ccmtest.Calls(t, state))
	}
	_, sdir, _ := strings.Cut(strings.TrimSpace(out[strings.LastIndex(out, "session was "):]), "session was ")
	if _, err := os.Stat(sdir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("session %q not removed: %v", sdir, err)
	}

	before := len(ccmtest.Calls(t, state))
	out = run()
	for _, want := range []string{"INFO  package#hello stable", "INFO  file#" + conf + " stable", "INFO  service#hello stable", "Stable Resources: 3", "Changed Resources: 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("second run lacks %q:\n%s", want, out)
		}
	}
	if m := mutatingCalls(ccmtest.Calls(t, state)[before:]); len(m) != 0 {
		t.Fatalf("second run changed the service: %v", m)
	}
}

func slicesContains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
