package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// hieraDoc is docs/manifests.md's example (order entries quoted: the spec's
// unquoted `${ }` inside a flow list is not valid YAML), with an
// annotated key and a nested map for --env.
const hieraDoc = `hierarchy:
  order: ["env:${ lookup('facts.env') }", "host:${ lookup('facts.hostname') }"]
  merge: MERGE
data:
  log_level: INFO
  packages: [ca-certificates]
  db: {port: 5432}
overrides:
  env:prod: {log_level: WARN, packages: [prodpkg]}
  host:web01: {log_level: TRACE}
`

const hieraAnnotated = `data:
  # @require
  token: ""
  # @validate isIP(value)
  addr: nope
`

func writeHieraFiles(t *testing.T, dir string) {
	t.Helper()
	for name, body := range map[string]string{
		"deep.yaml":      strings.Replace(hieraDoc, "MERGE", "deep", 1),
		"first.yaml":     strings.Replace(hieraDoc, "MERGE", "first", 1),
		"annotated.yaml": hieraAnnotated,
		"facts.yaml":     "env: prod\nhostname: fromfile\n",
		"over.json":      `{"db": {"port": 6432}, "log_level": "FILE"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHieraParse(t *testing.T) {
	dir := t.TempDir()
	writeHieraFiles(t, dir)
	noCustom := []string{"CCM_FACTS_DIRS="}
	tests := []struct {
		name       string
		env        []string
		args       []string
		wantCode   int
		wantJSON   map[string]any // decoded stdout, when set
		wantStdout string         // exact, when set
		wantStderr string         // substring, when set
	}{
		{
			name:     "spec example, merge deep",
			args:     []string{"hiera", "parse", "deep.yaml", "env=prod", "hostname=web01"},
			wantJSON: map[string]any{"log_level": "TRACE", "packages": []any{"ca-certificates", "prodpkg"}, "db": map[string]any{"port": 5432.0}},
		},
		{
			name:     "spec example, merge first",
			args:     []string{"hiera", "resolve", "first.yaml", "env=prod", "hostname=web01"},
			wantJSON: map[string]any{"log_level": "WARN", "packages": []any{"prodpkg"}, "db": map[string]any{"port": 5432.0}},
		},
		{name: "query prints a bare string", args: []string{"hiera", "parse", "deep.yaml", "env=prod", "--query", "log_level"}, wantStdout: "WARN\n"},
		{name: "query a list", args: []string{"hiera", "parse", "deep.yaml", "env=prod", "--query", "packages"}, wantStdout: "[\n  \"ca-certificates\",\n  \"prodpkg\"\n]\n"},
		{name: "query misses", args: []string{"hiera", "parse", "deep.yaml", "--query", "nope"}, wantCode: 1, wantStderr: "nothing matches"},
		{name: "yaml", args: []string{"hiera", "parse", "deep.yaml", "env=prod", "--yaml", "--query", "db"}, wantStdout: "port: 5432\n"},
		{
			name:       "env lines are sorted and upper-cased",
			args:       []string{"hiera", "parse", "deep.yaml", "env=prod", "--env"},
			wantStdout: "HIERA_DB={\"port\":5432}\nHIERA_LOG_LEVEL=WARN\nHIERA_PACKAGES=[\"ca-certificates\",\"prodpkg\"]\n",
		},
		{name: "env prefix", args: []string{"hiera", "parse", "deep.yaml", "--env", "--env-prefix", "X", "--query", "db"}, wantStdout: "X_PORT=5432\n"},
		{name: "env facts, values with =", env: []string{"env=prod", "hostname=a=b"}, args: []string{"hiera", "parse", "deep.yaml", "-E", "--query", "log_level"}, wantStdout: "WARN\n"},
		{name: "env facts lose to --facts", env: []string{"env=dev"}, args: []string{"hiera", "parse", "deep.yaml", "-E", "--facts", "facts.yaml", "--query", "log_level"}, wantStdout: "WARN\n"},
		{name: "positional facts win over --facts", args: []string{"hiera", "parse", "deep.yaml", "--facts", "facts.yaml", "hostname=web01", "--query", "log_level"}, wantStdout: "TRACE\n"},
		{name: "-S is accepted", args: []string{"hiera", "parse", "deep.yaml", "-S", "--query", "log_level"}, wantStdout: "INFO\n"},
		{name: "-D wins over resolution", args: []string{"hiera", "parse", "deep.yaml", "env=prod", "hostname=web01", "-D", "log_level=CLI", "-D", "db.port=1"}, wantJSON: map[string]any{"db": map[string]any{"port": "1"}, "log_level": "CLI", "packages": []any{"ca-certificates", "prodpkg"}}},
		{name: "-D wins over --data-file", args: []string{"hiera", "parse", "deep.yaml", "--data-file", "over.json", "-D", "log_level=CLI", "--env"}, wantStdout: "HIERA_DB={\"port\":6432}\nHIERA_LOG_LEVEL=CLI\nHIERA_PACKAGES=[\"ca-certificates\"]\n"},
		{name: "-D needs =", args: []string{"hiera", "parse", "deep.yaml", "-D", "over.json"}, wantCode: 2, wantStderr: "expected KEY=VALUE"},
		{name: "HIERA_INPUT", env: []string{"HIERA_INPUT=deep.yaml"}, args: []string{"hiera", "parse", "env=prod", "--query", "log_level"}, wantStdout: "WARN\n"},
		{name: "no input", args: []string{"hiera", "parse"}, wantCode: 2, wantStderr: "needs INPUT"},
		{name: "missing input", args: []string{"hiera", "parse", "nope.yaml"}, wantCode: 2, wantStderr: "nope.yaml"},
		{name: "annotations fail with file:line", args: []string{"hiera", "parse", "annotated.yaml"}, wantCode: 1, wantStderr: "annotated.yaml:2: data.token: @require failed"},
		{name: "annotations report every violation", args: []string{"hiera", "parse", "annotated.yaml"}, wantCode: 1, wantStderr: "annotated.yaml:4: data.addr: @validate failed"},
		{name: "-D satisfies annotations", args: []string{"hiera", "parse", "annotated.yaml", "-D", "token=t", "-D", "addr=10.0.0.1", "--query", "token"}, wantStdout: "t\n"},
		{name: "hiera facts", args: []string{"hiera", "facts", "env=prod", "--facts", "facts.yaml", "--query", "hostname"}, wantStdout: "fromfile\n"},
		{name: "hiera facts with -E", env: []string{"MY_FACT=x=y"}, args: []string{"hiera", "facts", "-E", "--query", "MY_FACT"}, wantStdout: "x=y\n"},
		{name: "hiera facts has system facts", args: []string{"hiera", "facts", "--query", "host.info.os"}, wantStdout: "linux\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ccmtest.Run(t, dir, append(noCustom, tt.env...), tt.args...)
			if res.Code != tt.wantCode {
				t.Fatalf("exit = %d, want %d\nstdout:\n%s\nstderr:\n%s", res.Code, tt.wantCode, res.Stdout, res.Stderr)
			}
			if tt.wantStdout != "" && res.Stdout != tt.wantStdout {
				t.Fatalf("stdout = %q, want %q", res.Stdout, tt.wantStdout)
			}
			if tt.wantStderr != "" && !strings.Contains(res.Stderr, tt.wantStderr) {
				t.Fatalf("stderr %q lacks %q", res.Stderr, tt.wantStderr)
			}
			if tt.wantJSON != nil {
				var got map[string]any
				if err := json.Unmarshal([]byte(res.Stdout), &got); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s", err, res.Stdout)
				}
				if !reflect.DeepEqual(got, tt.wantJSON) {
					t.Fatalf("got %v, want %v", got, tt.wantJSON)
				}
			}
		})
	}
}

func TestApplyHiera(t *testing.T) {
	dir := t.TempDir()
	writeHieraFiles(t, dir)
	writeManifest(t, dir, "m.yaml", `
data:
  log_level: MANIFEST
ccm:
  resources:
    - exec:
        - touch @DIR@/out/{{ lookup('data.log_level') }}: {}
`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ops" || p != "pw" {
			http.Error(w, "denied", http.StatusUnauthorized)
			return
		}
		w.Write([]byte(strings.Replace(hieraDoc, "MERGE", "deep", 1)))
	}))
	defer srv.Close()
	authURL := strings.Replace(srv.URL, "http://", "http://ops:pw@", 1) + "/h.yaml"
	prod := []string{"--fact", "env=prod", "--fact", "hostname=web01"}
	tests := []struct {
		name       string
		env        []string
		args       []string
		wantCode   int
		wantFile   string // created under out/
		wantStderr string
	}{
		{name: "no hiera: manifest data", wantFile: "MANIFEST"},
		{name: "hiera file beats manifest data", args: append([]string{"--hiera", "deep.yaml"}, prod...), wantFile: "TRACE"},
		{name: "file:// url", args: append([]string{"--hiera", "file://" + filepath.Join(dir, "first.yaml")}, prod...), wantFile: "WARN"},
		{name: "CCM_HIERA_DATA is the default", env: []string{"CCM_HIERA_DATA=first.yaml"}, args: prod, wantFile: "WARN"},
		{name: "--data beats --hiera", args: append([]string{"--hiera", "deep.yaml", "--data", "log_level=CLI"}, prod...), wantFile: "CLI"},
		{name: "http with basic auth", args: append([]string{"--hiera", authURL}, prod...), wantFile: "TRACE"},
		{name: "bad password is refused and redacted", args: []string{"--hiera", strings.Replace(authURL, ":pw@", ":bad@", 1)}, wantCode: 2, wantStderr: "ops:xxxxx@"},
		{name: "missing file is an error", args: []string{"--hiera", "nope.yaml"}, wantCode: 2, wantStderr: "--hiera"},
		{name: "annotations of the hiera source", args: []string{"--hiera", "annotated.yaml"}, wantCode: 2, wantStderr: "annotated.yaml:2: data.token: @require failed"},
		{name: "--data satisfies hiera annotations", args: []string{"--hiera", "annotated.yaml", "--data", "token=t", "--data", "addr=10.0.0.1"}, wantFile: "MANIFEST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			if err := os.RemoveAll(out); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			env := append([]string{"CCM_FACTS_DIRS="}, tt.env...)
			res := ccmtest.Run(t, dir, env, append([]string{"apply", "m.yaml", "--no-report"}, tt.args...)...)
			if res.Code != tt.wantCode {
				t.Fatalf("exit = %d, want %d\nstdout:\n%s\nstderr:\n%s", res.Code, tt.wantCode, res.Stdout, res.Stderr)
			}
			if tt.wantStderr != "" && !strings.Contains(res.Stderr, tt.wantStderr) {
				t.Fatalf("stderr %q lacks %q", res.Stderr, tt.wantStderr)
			}
			if strings.Contains(res.Stderr, ":bad@") || strings.Contains(res.Stderr, ":pw@") {
				t.Fatalf("stderr leaks a password: %s", res.Stderr)
			}
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			var want []string
			if tt.wantFile != "" {
				want = []string{tt.wantFile}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("created %v, want %v\nstdout:\n%s\nstderr:\n%s", got, want, res.Stdout, res.Stderr)
			}
		})
	}
}
