package main

// End-to-end tests of every exec property and of the control, require,
// subscribe and fail_on_error semantics through the real ccm binary and the
// real exec plugin (docs/resources.md, docs/manifests.md, docs/decisions.md).
// Cases use the runner of file_e2e_test.go.

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// defaultChildPath is the PATH every exec child gets unless `path` is set.
const defaultChildPath = "PATH=/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin:/usr/local/sbin"

// execManifest wraps exec entries (indented for list items under `- exec:`).
func execManifest(entries string) string {
	return "ccm:\n  resources:\n    - exec:\n" + entries
}

func TestExecCommand(t *testing.T) {
	runE2E(t, []e2eCase{
		{
			name: "the name is the command unless command is set",
			runs: []e2eRun{{
				manifest: execManifest(`        - touch @DIR@/by-name: {}
        - touch @DIR@/not-this:
            command: touch @DIR@/this
`),
				events: []e2eEvent{
					{ref: "exec#touch @DIR@/by-name", outcome: "changed", final: "present"},
					{ref: "exec#touch @DIR@/not-this", outcome: "changed"},
				},
				files: []e2eFile{{path: "by-name", kind: "file"}, {path: "this", kind: "file"}, {path: "not-this", kind: "absent"}},
			}},
		},
		{
			name: "posix quoting: quotes and backslashes group words, no shell",
			runs: []e2eRun{{
				manifest: execManifest(`        - quoted:
            command: |-
              touch "@DIR@/two words" '@DIR@/single $HOME' @DIR@/back\ slash
        - no-shell:
            command: /bin/echo hi > @DIR@/redirected
`),
				events: []e2eEvent{{ref: "exec#quoted", outcome: "changed"}, {ref: "exec#no-shell", outcome: "changed"}},
				files: []e2eFile{
					{path: "two words", kind: "file"},
					{path: "single $HOME", kind: "file"},
					{path: "back slash", kind: "file"},
					{path: "redirected", kind: "absent"}, // ">" was an argument of echo
				},
			}},
		},
		{
			name: "bad posix quoting is a load error",
			runs: []e2eRun{{
				manifest: execManifest(`        - touch @DIR@/first: {}
        - unterminated:
            command: touch "@DIR@/x
`),
				exit:   2,
				stderr: "exec#unterminated",
				files:  []e2eFile{{path: "first", kind: "absent"}},
			}},
		},
		{
			name: "shell provider runs pipes and multi-line scripts (peer-note 2)",
			runs: []e2eRun{{
				manifest: execManifest(`        - pipe:
            provider: shell
            command: echo hello | tr a-z A-Z > @DIR@/upper
        - script:
            provider: shell
            command: |
              echo one > @DIR@/multi
              echo "two words" >> @DIR@/multi
`),
				events: []e2eEvent{{ref: "exec#pipe", outcome: "changed"}, {ref: "exec#script", outcome: "changed"}},
				files: []e2eFile{
					{path: "upper", kind: "file", content: text("HELLO\n")},
					{path: "multi", kind: "file", content: text("one\ntwo words\n")},
				},
			}},
		},
		{
			name: "cwd is / by default and can be set",
			setup: func(t *testing.T, dir string) {
				e2eMkdir(t, dir+"/work", 0o755)
			},
			runs: []e2eRun{{
				manifest: execManifest(`        - default-cwd:
            command: /bin/sh -c 'pwd > @DIR@/pwd'
        - set-cwd:
            command: touch relative
            cwd: @DIR@/work
`),
				files: []e2eFile{{path: "pwd", kind: "file", content: text("/\n")}, {path: "work/relative", kind: "file"}},
			}},
		},
		{
			name: "returns accepts listed non-zero exit codes",
			runs: []e2eRun{{
				manifest: execManifest(`        - three-ok:
            command: /bin/sh -c 'exit 3'
            returns: [0, 3]
        - false-ok:
            command: /bin/false
            returns: [1]
        - three-default:
            command: /bin/sh -c 'exit 3'
        - zero-not-listed:
            command: /bin/true
            returns: [1]
`),
				exit: 1,
				events: []e2eEvent{
					{ref: "exec#three-ok", outcome: "changed"},
					{ref: "exec#false-ok", outcome: "changed"},
					{ref: "exec#three-default", outcome: "failed", err: "exit code 3 not in allowed returns [0]"},
					{ref: "exec#zero-not-listed", outcome: "failed", err: "exit code 0 not in allowed returns [1]"},
				},
			}},
		},
		{
			name: "a failed command reports its stderr",
			runs: []e2eRun{{
				manifest: execManifest("        - noisy:\n            command: /bin/sh -c 'echo it broke >&2; exit 2'\n"),
				exit:     1,
				events:   []e2eEvent{{ref: "exec#noisy", outcome: "failed", err: "exit code 2", info: "it broke"}},
			}},
		},
		{
			name: "a missing program fails the resource, the run goes on",
			runs: []e2eRun{{
				manifest: execManifest(`        - /nonexistent/program: {}
        - touch @DIR@/after: {}
`),
				exit: 1,
				events: []e2eEvent{
					{ref: "exec#/nonexistent/program", outcome: "failed", err: "/nonexistent/program"},
					{ref: "exec#touch @DIR@/after", outcome: "changed"},
				},
				files: []e2eFile{{path: "after", kind: "file"}},
			}},
		},
		{
			name: "a missing cwd fails naming the directory",
			runs: []e2eRun{{
				manifest: execManifest("        - /bin/true:\n            cwd: @DIR@/nope\n"),
				exit:     1,
				events:   []e2eEvent{{ref: "exec#/bin/true", outcome: "failed", err: "@DIR@/nope"}},
			}},
		},
		{
			name: "ensure absent is rejected at load (peer-note 21)",
			runs: []e2eRun{{
				manifest: execManifest("        - touch @DIR@/ran: {ensure: absent}\n"),
				exit:     2,
				stderr:   "ensure absent is not supported by exec",
				files:    []e2eFile{{path: "ran", kind: "absent"}},
			}},
		},
		{
			name: "unknown property is rejected at load (peer-note 4)",
			runs: []e2eRun{{
				manifest: execManifest("        - touch @DIR@/ran: {creates: /, onlyfi: /bin/true}\n"),
				exit:     2,
				stderr:   `unknown property "onlyfi"`,
				files:    []e2eFile{{path: "ran", kind: "absent"}},
			}},
		},
	})
}

func TestExecEnvironment(t *testing.T) {
	envCheck := func(want ...string) func(*testing.T, string, runOutput) {
		return func(t *testing.T, dir string, _ runOutput) {
			got := e2eEnvFile(t, dir+"/env")
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("child environment:\n  got  %q\n  want %q", got, want)
			}
		}
	}
	writeTool := func(t *testing.T, dir string) {
		// mytool lives only in @DIR@/bin and records the PATH it was given.
		e2ePut(t, dir+"/bin/mytool", "#!/bin/sh\necho \"$PATH\" > \"$1\"\n", 0o755)
		// A PATH beyond the system directories chooses the programs a
		// child runs: it needs an env grant, also in the root scope.
		e2ePut(t, dir+"/grants.yaml", "fs_read: [/**]\nfs_write: [/**]\nexec: [/**]\nusers: true\nenv: [PATH, \"*\"]\n", 0o644)
	}
	runE2E(t, []e2eCase{
		{
			name: "clean environment: the parent's variables do not leak (peer-note 20)",
			runs: []e2eRun{{
				manifest: execManifest("        - dump:\n            command: /bin/sh -c 'env > @DIR@/env'\n"),
				env:      []string{"FOO=leak", "LANG=de_DE.UTF-8"},
				check:    envCheck(defaultChildPath, "LANG=C", "LC_ALL=C"),
			}},
		},
		{
			name: "environment entries are added and override the defaults",
			runs: []e2eRun{{
				manifest: execManifest(`        - dump:
            command: /bin/sh -c 'env > @DIR@/env'
            environment:
              - A=1
              - B=two words
              - LANG=en_US.UTF-8
              - EQ=a=b
`),
				env:   []string{"FOO=leak"},
				check: envCheck(defaultChildPath, "LANG=en_US.UTF-8", "LC_ALL=C", "A=1", "B=two words", "EQ=a=b"),
			}},
		},
		{
			name:  "path finds the program and is the child's PATH (peer-note 6)",
			setup: writeTool,
			runs: []e2eRun{{
				manifest: execManifest(`        - tool:
            command: mytool @DIR@/path.out
            path: @DIR@/bin:/usr/bin:/bin
`),
				args:   []string{"--grants", "grants.yaml"},
				events: []e2eEvent{{ref: "exec#tool", outcome: "changed"}},
				files:  []e2eFile{{path: "path.out", kind: "file", content: text("@DIR@/bin:/usr/bin:/bin\n")}},
			}},
		},
		{
			name:  "path also serves the shell provider",
			setup: writeTool,
			runs: []e2eRun{{
				manifest: execManifest(`        - tool:
            provider: shell
            command: mytool @DIR@/path.out && touch @DIR@/after
            path: @DIR@/bin:/usr/bin:/bin
`),
				args:  []string{"--grants", "grants.yaml"},
				files: []e2eFile{{path: "path.out", kind: "file", content: text("@DIR@/bin:/usr/bin:/bin\n")}, {path: "after", kind: "file"}},
			}},
		},
		{
			name:  "a path beyond the system directories without an env grant is refused, naming the rule",
			setup: writeTool,
			runs: []e2eRun{{
				manifest: execManifest(`        - tool:
            command: mytool @DIR@/path.out
            path: @DIR@/bin:/usr/bin:/bin
`),
				exit:   1,
				events: []e2eEvent{{ref: "exec#tool", outcome: "failed", err: `PATH can make the program load or run other code; it runs only with an env entry "PATH"`}},
				files:  []e2eFile{{path: "path.out", kind: "absent"}},
			}},
		},
		{
			name:  "without path the program is not found",
			setup: writeTool,
			runs: []e2eRun{{
				manifest: execManifest("        - tool:\n            command: mytool @DIR@/path.out\n"),
				exit:     1,
				events:   []e2eEvent{{ref: "exec#tool", outcome: "failed", err: "mytool"}},
				files:    []e2eFile{{path: "path.out", kind: "absent"}},
			}},
		},
		{
			name: "relative path entries are a load error",
			runs: []e2eRun{{
				manifest: execManifest("        - touch @DIR@/ran:\n            path: bin:/usr/bin\n"),
				exit:     2,
				stderr:   `path entry "bin" must be an absolute directory`,
				files:    []e2eFile{{path: "ran", kind: "absent"}},
			}},
		},
		{
			name: ".env values reach templates with dotenv rules (peer-note 8)",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/.env", "QUOTED=\"httpd\"\nexport EXPORTED=1\nSPACED = value\nEMPTY=\n# COMMENTED=yes\nFROMPROC=dotenv\n", 0o600)
			},
			runs: []e2eRun{{
				manifest: execManifest(`        - dotenv:
            command: touch @DIR@/{{ Environ.QUOTED }}-{{ Environ.EXPORTED }}-{{ Environ.SPACED }}-x{{ lookup('environ.EMPTY', 'missing') }}x-{{ lookup('environ.COMMENTED', 'none') }}-{{ Environ.FROMPROC }}-{{ Environ.ONLYPROC }}
`),
				env:    []string{"FROMPROC=process", "ONLYPROC=proc"},
				events: []e2eEvent{{ref: "exec#dotenv", outcome: "changed"}},
				files:  []e2eFile{{path: "httpd-1-value-xx-none-dotenv-proc", kind: "file"}},
			}},
		},
		{
			name: "deferred cwd, environment and command are rendered per resource",
			setup: func(t *testing.T, dir string) {
				e2eMkdir(t, dir+"/work", 0o755)
			},
			runs: []e2eRun{{
				manifest: "data:\n  sub: work\n  who: world\n" + execManifest(`        - render:
            command: /bin/sh -c 'echo "$WHO" > {{ Data.sub }}.out'
            cwd: "@DIR@/{{ Data.sub }}"
            environment: ["WHO={{ Data.who }}"]
            creates: "@DIR@/{{ Data.sub }}/work.out"
`),
				files: []e2eFile{{path: "work/work.out", kind: "file", content: text("world\n")}},
			}},
			// creates is rendered too: the second run finds work/work.out.
			stable: true,
		},
	})
}

// e2eEnvFile reads an `env` dump, sorted, without the variables the shell
// itself sets.
func e2eEnvFile(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("reading the child's environment: %v", err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		k, _, _ := strings.Cut(l, "=")
		if k == "PWD" || k == "OLDPWD" || k == "SHLVL" || k == "_" {
			continue
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

func TestExecTimeout(t *testing.T) {
	pidGone := func(t *testing.T, dir string, _ runOutput) {
		b, err := os.ReadFile(dir + "/pid")
		if err != nil {
			t.Fatalf("the command did not record its background pid: %v", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if !e2eProcessGone(pid, 2*time.Second) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("grandchild %d (sleep 30) survived the timeout", pid)
		}
	}
	runE2E(t, []e2eCase{
		{
			name: "posix: sleep 30 is killed at 1s (peer-note 5)",
			runs: []e2eRun{{
				manifest: execManifest(`        - sleeper:
            command: sleep 30
            timeout: 1s
        - touch @DIR@/after: {}
`),
				exit:   1,
				within: 5 * time.Second,
				events: []e2eEvent{
					{ref: "exec#sleeper", outcome: "failed", err: "timed out after 1s"},
					{ref: "exec#touch @DIR@/after", outcome: "changed"},
				},
				files: []e2eFile{{path: "after", kind: "file"}},
			}},
		},
		{
			name: "posix: a grandchild in the process group is killed too",
			runs: []e2eRun{{
				manifest: execManifest(`        - family:
            command: /bin/sh -c 'sleep 30 & echo $! > @DIR@/pid; wait'
            timeout: 500ms
`),
				exit:   1,
				within: 5 * time.Second,
				events: []e2eEvent{{ref: "exec#family", outcome: "failed", err: "process group was killed"}},
				check:  pidGone,
			}},
		},
		{
			name: "shell: the script and its background job are killed",
			runs: []e2eRun{{
				manifest: execManifest(`        - family:
            provider: shell
            command: sleep 30 & echo $! > @DIR@/pid; wait
            timeout: 500ms
`),
				exit:   1,
				within: 5 * time.Second,
				events: []e2eEvent{{ref: "exec#family", outcome: "failed", err: "timed out"}},
				check:  pidGone,
			}},
		},
		{
			name: "a guard is bound by the timeout too",
			runs: []e2eRun{{
				manifest: execManifest(`        - touch @DIR@/ran:
            onlyif: sleep 30
            timeout: 500ms
`),
				exit:   1,
				within: 5 * time.Second,
				events: []e2eEvent{{ref: "exec#touch @DIR@/ran", outcome: "failed", err: "onlyif guard"}},
				files:  []e2eFile{{path: "ran", kind: "absent"}},
			}},
		},
		{
			name: "a command within its timeout succeeds",
			runs: []e2eRun{{
				manifest: execManifest("        - touch @DIR@/ran:\n            timeout: 10s\n"),
				events:   []e2eEvent{{ref: "exec#touch @DIR@/ran", outcome: "changed"}},
				files:    []e2eFile{{path: "ran", kind: "file"}},
			}},
		},
	})
}

// e2eProcessGone waits up to d for pid to be gone or a zombie (killed,
// waiting for a reaper that may not exist in a container).
func e2eProcessGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// The state follows the parenthesised command name.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestExecGuards(t *testing.T) {
	runE2E(t, []e2eCase{
		{
			name: "creates exists: nothing runs, not even the guards (peer-note 21)",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/exists", "", 0o644)
			},
			runs: []e2eRun{{
				manifest: execManifest(`        - guarded:
            command: touch @DIR@/ran
            creates: @DIR@/exists
            onlyif: touch @DIR@/onlyif-ran
            unless: /bin/sh -c 'touch @DIR@/unless-ran; exit 1'
`),
				events: []e2eEvent{{ref: "exec#guarded", outcome: "stable", info: "not run: creates @DIR@/exists exists"}},
				files:  []e2eFile{{path: "ran", kind: "absent"}, {path: "onlyif-ran", kind: "absent"}, {path: "unless-ran", kind: "absent"}},
			}},
			stable: true,
		},
		{
			name: "creates missing: the command runs, then it is stable",
			runs: []e2eRun{{
				manifest: execManifest("        - touch @DIR@/made:\n            creates: @DIR@/made\n"),
				events:   []e2eEvent{{ref: "exec#touch @DIR@/made", outcome: "changed"}},
				files:    []e2eFile{{path: "made", kind: "file"}},
			}},
			stable: true,
		},
		{
			name: "onlyif and unless decide",
			setup: func(t *testing.T, dir string) {
				e2ePut(t, dir+"/flag", "", 0o644)
			},
			runs: []e2eRun{{
				manifest: execManifest(`        - onlyif-true: {command: touch @DIR@/onlyif-true, onlyif: /bin/true}
        - onlyif-false: {command: touch @DIR@/onlyif-false, onlyif: /bin/false}
        - unless-true: {command: touch @DIR@/unless-true, unless: /bin/true}
        - unless-false: {command: touch @DIR@/unless-false, unless: /bin/false}
        - both-pass: {command: touch @DIR@/both-pass, onlyif: test -e @DIR@/flag, unless: test -e @DIR@/nope}
        - unless-vetoes: {command: touch @DIR@/unless-vetoes, onlyif: /bin/true, unless: test -e @DIR@/flag}
`),
				events: []e2eEvent{
					{ref: "exec#onlyif-true", outcome: "changed"},
					{ref: "exec#onlyif-false", outcome: "stable", info: `not run: onlyif "/bin/false" exited 1`},
					{ref: "exec#unless-true", outcome: "stable", info: `not run: unless "/bin/true" exited 0`},
					{ref: "exec#unless-false", outcome: "changed"},
					{ref: "exec#both-pass", outcome: "changed"},
					{ref: "exec#unless-vetoes", outcome: "stable"},
				},
				files: []e2eFile{
					{path: "onlyif-true", kind: "file"},
					{path: "onlyif-false", kind: "absent"},
					{path: "unless-true", kind: "absent"},
					{path: "unless-false", kind: "file"},
					{path: "both-pass", kind: "file"},
					{path: "unless-vetoes", kind: "absent"},
				},
			}},
		},
		{
			name: "guards run with the exec's cwd, environment and shell provider",
			setup: func(t *testing.T, dir string) {
				e2eMkdir(t, dir+"/work", 0o755)
				e2ePut(t, dir+"/work/flag", "", 0o644)
			},
			runs: []e2eRun{{
				manifest: execManifest(`        - ctx:
            provider: shell
            command: touch @DIR@/ran
            cwd: @DIR@/work
            environment: [WANT=yes]
            onlyif: test -e flag && test "$WANT" = yes
`),
				events: []e2eEvent{{ref: "exec#ctx", outcome: "changed"}},
				files:  []e2eFile{{path: "ran", kind: "file"}},
			}},
		},
		{
			name: "a guard that cannot start fails the resource",
			runs: []e2eRun{{
				manifest: execManifest("        - touch @DIR@/ran:\n            onlyif: /nonexistent/guard\n"),
				exit:     1,
				events:   []e2eEvent{{ref: "exec#touch @DIR@/ran", outcome: "failed", err: "onlyif guard"}},
				files:    []e2eFile{{path: "ran", kind: "absent"}},
			}},
		},
		{
			name: "noop runs the guards but not the command",
			runs: []e2eRun{{
				manifest: execManifest("        - probe:\n            command: touch @DIR@/ran\n            onlyif: touch @DIR@/guard-ran\n"),
				args:     []string{"--noop"},
				events:   []e2eEvent{{ref: "exec#probe", outcome: "changed", noop: "Would have executed"}},
				files:    []e2eFile{{path: "guard-ran", kind: "file"}, {path: "ran", kind: "absent"}},
			}},
		},
	})
}

func TestExecRefresh(t *testing.T) {
	manifest := func(spelling, content string) string {
		return fileManifest("        - @DIR@/conf: {content: \""+content+"\"}\n") + `    - exec:
        - reload:
            command: /bin/sh -c 'echo x >> @DIR@/reloads'
            ` + spelling + `: true
            subscribe: [file#@DIR@/conf]
        - forced:
            command: /bin/sh -c 'echo x >> @DIR@/forced'
            creates: @DIR@/conf
            subscribe: [file#@DIR@/conf]
`
	}
	var cases []e2eCase
	for _, spelling := range []string{"refreshonly", "refresh_only"} {
		cases = append(cases, e2eCase{
			name: spelling + " runs only when the subscribed file changed (peer-note 4)",
			runs: []e2eRun{
				{
					manifest: manifest(spelling, "v1"),
					events: []e2eEvent{
						{ref: "exec#reload", outcome: "refreshed"},
						// A refresh runs even though creates exists.
						{ref: "exec#forced", outcome: "refreshed"},
					},
					files: []e2eFile{{path: "reloads", kind: "file", content: text("x\n")}, {path: "forced", kind: "file", content: text("x\n")}},
				},
				{
					events: []e2eEvent{
						{ref: "exec#reload", outcome: "stable", info: "not run: refreshonly"},
						{ref: "exec#forced", outcome: "stable", info: "not run: creates"},
					},
					files: []e2eFile{{path: "reloads", kind: "file", content: text("x\n")}, {path: "forced", kind: "file", content: text("x\n")}},
				},
				{
					manifest: manifest(spelling, "v2"),
					events:   []e2eEvent{{ref: "exec#reload", outcome: "refreshed"}},
					files:    []e2eFile{{path: "reloads", kind: "file", content: text("x\nx\n")}},
				},
			},
		})
	}
	cases = append(cases,
		e2eCase{
			name: "noop reports the refresh it would do",
			runs: []e2eRun{{
				manifest: manifest("refreshonly", "v1"),
				args:     []string{"--noop"},
				events:   []e2eEvent{{ref: "exec#reload", outcome: "refreshed", noop: "Would have executed via subscribe"}},
				files:    []e2eFile{{path: "conf", kind: "absent"}, {path: "reloads", kind: "absent"}},
			}},
		},
		e2eCase{
			name: "a failed subscription target does not refresh",
			runs: []e2eRun{{
				manifest: fileManifest("        - @DIR@/missing/conf: {content: \"x\"}\n") + `    - exec:
        - reload:
            command: touch @DIR@/reloaded
            refreshonly: true
            subscribe: [file#@DIR@/missing/conf]
`,
				exit:   1,
				events: []e2eEvent{{ref: "file#@DIR@/missing/conf", outcome: "failed"}, {ref: "exec#reload", outcome: "stable"}},
				files:  []e2eFile{{path: "reloaded", kind: "absent"}},
			}},
		},
		e2eCase{
			name: "refreshonly and refresh_only disagreeing is a load error",
			runs: []e2eRun{{
				manifest: execManifest("        - touch @DIR@/ran: {refreshonly: true, refresh_only: false}\n"),
				exit:     2,
				stderr:   "refreshonly (true) and refresh_only (false) disagree",
				files:    []e2eFile{{path: "ran", kind: "absent"}},
			}},
		},
	)
	runE2E(t, cases)
}

// TestExecLogOutput: logoutput logs each stdout line; without it the output
// stays out of the log. Text output, not --json, is what a person reads.
func TestExecLogOutput(t *testing.T) {
	tests := []struct {
		name    string
		entries string
		logged  []string
		hidden  []string
		within  time.Duration
		bug     string
	}{
		{
			name: "lines are logged only with logoutput",
			entries: `        - loud:
            command: /bin/sh -c 'echo loud-line-1; echo loud-line-2'
            logoutput: true
        - quiet:
            command: /bin/echo quiet-line
`,
			logged: []string{"loud-line-1", "loud-line-2"},
			hidden: []string{"quiet-line"},
		},
		{
			// 50,000 lines took 3.6 s (100,000: 7.3 s; 2.5 million: 46 s)
			// with one ccm_log host call per line; without logoutput 0.3 s.
			name: "a long output is logged in reasonable time",
			entries: `        - chatty:
            command: seq 1 50000
            logoutput: true
`,
			logged: []string{"49999", "50000"},
			within: 2 * time.Second,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.bug != "" {
				t.Skip("BUG: " + tt.bug)
			}
			dir := e2eDir(t)
			writeManifest(t, dir, "m.yaml", execManifest(tt.entries))
			start := time.Now()
			res := ccmtest.Run(t, dir, nil, "apply", "m.yaml")
			took := time.Since(start)
			if res.Code != 0 {
				t.Fatalf("exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
			}
			all := res.Stdout + res.Stderr
			for _, s := range tt.logged {
				if !strings.Contains(all, s) {
					t.Errorf("%q not logged", s)
				}
			}
			for _, s := range tt.hidden {
				if strings.Contains(all, s) {
					t.Errorf("%q logged without logoutput", s)
				}
			}
			if tt.within > 0 && took > tt.within {
				t.Errorf("ccm took %v, want under %v", took.Round(time.Millisecond), tt.within)
			}
			if t.Failed() && len(all) < 4000 {
				t.Logf("output:\n%s", all)
			}
		})
	}
}

// TestExecEventDuration: each event's duration is its own resource's run
// time (docs/shell.md), so a slow command is visible in the report.
func TestExecEventDuration(t *testing.T) {
	runE2E(t, []e2eCase{{
		name: "a slow command's event says so, a fast one's does not",
		runs: []e2eRun{{
			manifest: execManifest("        - sleep 1: {}\n        - /bin/true: {}\n"),
			check: func(t *testing.T, _ string, out runOutput) {
				if d := out.event(t, "exec#sleep 1").Duration; d < time.Second {
					t.Errorf("sleep 1: duration %v, want at least 1s", d)
				}
				if d := out.event(t, "exec#/bin/true").Duration; d > 500*time.Millisecond {
					t.Errorf("/bin/true: duration %v, want well under the sleep's", d)
				}
			},
		}},
	}})
}

// TestExecControlIfUnless is docs/manifests.md's table, one resource per row
// in one manifest, plus expressions that fail only their own resource
// (peer-note 10).
func TestExecControlIfUnless(t *testing.T) {
	rows := []struct {
		name, ifExpr, unlessExpr string
		want                     string // changed, skipped or failed
	}{
		{"neither", "", "", "changed"},
		{"if true", "Data.yes", "", "changed"},
		{"if false", "Data.no", "", "skipped"},
		{"unless true", "", "Data.yes", "skipped"},
		{"unless false", "", "Data.no", "changed"},
		{"if true unless true", "Data.yes", "Data.yes", "skipped"},
		{"if true unless false", "Data.yes", "Data.no", "changed"},
		{"if false unless true", "Data.no", "Data.yes", "skipped"},
		{"if false unless false", "Data.no", "Data.no", "skipped"},
		{"if over facts and environ", `Facts.user.uid == ` + strconv.Itoa(os.Getuid()) + ` && Environ.CTL == "on"`, "", "changed"},
		{"if wrapped in braces does not compile", "{{ Data.yes }}", "", "failed"},
		{"if not a boolean", "Data.name", "", "failed"},
	}
	var b strings.Builder
	b.WriteString("data:\n  yes: true\n  no: false\n  name: bob\nccm:\n  resources:\n    - exec:\n")
	for i, r := range rows {
		fmt.Fprintf(&b, "        - row%d:\n            command: touch @DIR@/row%d\n", i, i)
		if r.ifExpr != "" || r.unlessExpr != "" {
			b.WriteString("            control:\n")
		}
		if r.ifExpr != "" {
			fmt.Fprintf(&b, "              if: %q\n", r.ifExpr)
		}
		if r.unlessExpr != "" {
			fmt.Fprintf(&b, "              unless: %q\n", r.unlessExpr)
		}
	}
	dir := e2eDir(t)
	out := e2eStep(t, dir, "control table", e2eRun{manifest: b.String(), env: []string{"CTL=on"}, exit: 1})
	for i, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			e := out.event(t, "exec#row"+strconv.Itoa(i))
			if e.Outcome() != r.want {
				t.Errorf("outcome %s, want %s (errors %v)", e.Outcome(), r.want, e.Error)
			}
			_, err := os.Stat(dir + "/row" + strconv.Itoa(i))
			if ran := err == nil; ran != (r.want == "changed") {
				t.Errorf("command ran = %v, want %v", ran, r.want == "changed")
			}
		})
	}
}

func TestExecControlFlow(t *testing.T) {
	runE2E(t, []e2eCase{
		{
			name: "a deferred command is not rendered when control skips it (docs/manifests.md)",
			runs: []e2eRun{{
				manifest: execManifest(`        - skipped:
            command: touch @DIR@/{{ lookup('data.missing') }}
            creates: "{{ lookup('data.missing') }}"
            control: {if: "false"}
        - touch @DIR@/after: {}
`),
				events: []e2eEvent{{ref: "exec#skipped", outcome: "skipped"}, {ref: "exec#touch @DIR@/after", outcome: "changed"}},
				files:  []e2eFile{{path: "after", kind: "file"}},
			}},
		},
		{
			name: "a deferred template error fails only its resource (peer-note 10)",
			runs: []e2eRun{{
				manifest: execManifest(`        - broken:
            command: touch @DIR@/{{ lookup('data.missing') }}
        - touch @DIR@/after: {}
`),
				exit:   1,
				events: []e2eEvent{{ref: "exec#broken", outcome: "failed", err: "data.missing"}, {ref: "exec#touch @DIR@/after", outcome: "changed"}},
				files:  []e2eFile{{path: "after", kind: "file"}},
			}},
		},
		{
			name: "require: a failure skips the whole chain, unrelated resources run",
			runs: []e2eRun{{
				manifest: execManifest(`        - a: {command: /bin/false}
        - b: {command: touch @DIR@/b, require: [exec#a]}
        - c: {command: touch @DIR@/c, require: [exec#b]}
        - d: {command: touch @DIR@/d}
`),
				exit: 1,
				events: []e2eEvent{
					{ref: "exec#a", outcome: "failed"},
					{ref: "exec#b", outcome: "skipped", unmet: []string{"exec#a"}},
					{ref: "exec#c", outcome: "skipped", unmet: []string{"exec#b"}},
					{ref: "exec#d", outcome: "changed"},
				},
				files: []e2eFile{{path: "b", kind: "absent"}, {path: "c", kind: "absent"}, {path: "d", kind: "file"}},
				check: func(t *testing.T, _ string, out runOutput) {
					if out.Summary.UnmetRequirements != 2 || out.Summary.Skipped != 2 || out.Summary.Failed != 1 {
						t.Errorf("summary %+v, want 2 unmet, 2 skipped, 1 failed", out.Summary)
					}
				},
			}},
		},
		{
			name: "require: a control-skipped dependency does not block",
			runs: []e2eRun{{
				manifest: execManifest(`        - a: {command: touch @DIR@/a, control: {if: "false"}}
        - b: {command: touch @DIR@/b, require: [exec#a]}
`),
				events: []e2eEvent{{ref: "exec#a", outcome: "skipped"}, {ref: "exec#b", outcome: "changed"}},
				files:  []e2eFile{{path: "a", kind: "absent"}, {path: "b", kind: "file"}},
			}},
		},
		{
			name: "require by alias, met and unmet",
			runs: []e2eRun{{
				manifest: "ccm:\n  resources:\n    - file:\n        - @DIR@/conf: {content: x, alias: conf, owner: \"@USER@\", group: \"@GROUP@\", mode: \"0644\"}\n" +
					"    - exec:\n" + `        - touch @DIR@/first: {alias: first}
        - second: {command: touch @DIR@/second, require: [exec#first]}
        - /bin/false: {alias: broken}
        - third: {command: touch @DIR@/third, require: [exec#broken]}
        - fourth: {command: touch @DIR@/fourth, require: [file#conf]}
`,
				exit: 1,
				events: []e2eEvent{
					{ref: "exec#second", outcome: "changed"},
					{ref: "exec#third", outcome: "skipped", unmet: []string{"exec#broken"}},
					{ref: "exec#fourth", outcome: "changed"},
				},
				files: []e2eFile{{path: "second", kind: "file"}, {path: "third", kind: "absent"}, {path: "fourth", kind: "file"}},
			}},
		},
		{
			name: "require on a resource declared later is a load error",
			runs: []e2eRun{{
				manifest: execManifest(`        - touch @DIR@/first: {}
        - early: {command: touch @DIR@/early, require: [exec#late]}
        - late: {command: /bin/true}
`),
				exit:   2,
				stderr: "exec#late",
				files:  []e2eFile{{path: "first", kind: "absent"}, {path: "early", kind: "absent"}},
			}},
		},
		{
			name: "fail_on_error stops at the first failure and reports the rest skipped",
			runs: []e2eRun{{
				manifest: "ccm:\n  fail_on_error: true\n  resources:\n    - exec:\n" + `        - touch @DIR@/before: {}
        - /bin/false: {}
        - touch @DIR@/after: {}
`,
				exit: 1,
				events: []e2eEvent{
					{ref: "exec#touch @DIR@/before", outcome: "changed"},
					{ref: "exec#/bin/false", outcome: "failed"},
					{ref: "exec#touch @DIR@/after", outcome: "skipped"},
				},
				files: []e2eFile{{path: "before", kind: "file"}, {path: "after", kind: "absent"}},
			}},
		},
	})
}
