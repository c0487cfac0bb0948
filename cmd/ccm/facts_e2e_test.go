package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
	"go.yaml.in/yaml/v3"
)

func TestFactsCommand(t *testing.T) {
	dir := t.TempDir()
	sys := filepath.Join(dir, "sys")
	if err := os.MkdirAll(filepath.Join(sys, "facts.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"sys/facts.yaml":        "site: ams\nenv: custom\n",
		"sys/facts.d/10-x.json": `{"team": {"name": "ops"}}`,
		"extra.yaml":            "env: file\nrack: r1\n",
		"bad/facts.json":        "{",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hostname, _ := os.Hostname()
	env := []string{"CCM_FACTS_DIRS=" + sys}
	tests := []struct {
		name       string
		env        []string
		args       []string
		wantCode   int
		wantStdout string // exact, when set
		check      func(t *testing.T, stdout string)
		wantStderr string
	}{
		{name: "query prints a bare string", env: env, args: []string{"facts", "host.info.hostname"}, wantStdout: hostname + "\n"},
		{name: "custom facts", env: env, args: []string{"facts", "team.name"}, wantStdout: "ops\n"},
		{name: "--facts wins over custom", env: env, args: []string{"facts", "env", "--facts", filepath.Join(dir, "extra.yaml")}, wantStdout: "file\n"},
		{name: "--fact wins over --facts", env: env, args: []string{"facts", "env", "--facts", filepath.Join(dir, "extra.yaml"), "--fact", "env=cli"}, wantStdout: "cli\n"},
		{name: "all facts as json", env: env, args: []string{"facts"}, check: func(t *testing.T, stdout string) {
			var m map[string]any
			if err := json.Unmarshal([]byte(stdout), &m); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, stdout)
			}
			for _, k := range []string{"host", "network", "partition", "cpu", "memory", "user", "site"} {
				if m[k] == nil {
					t.Errorf("family %q missing", k)
				}
			}
			if !strings.Contains(stdout, "\n  \"host\": {") {
				t.Errorf("output is not indented JSON:\n%.200s", stdout)
			}
		}},
		{name: "query a map as yaml", env: env, args: []string{"facts", "memory.virtual", "--yaml"}, check: func(t *testing.T, stdout string) {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(stdout), &m); err != nil {
				t.Fatalf("not YAML: %v\n%s", err, stdout)
			}
			if _, ok := m["total"].(int); !ok || strings.Contains(stdout, "e+") {
				t.Errorf("memory.virtual.total = %#v, want an integer:\n%s", m["total"], stdout)
			}
		}},
		{name: "unknown query", env: env, args: []string{"facts", "no.such.fact"}, wantCode: 1, wantStderr: `no fact matches "no.such.fact"`},
		{name: "bad custom file names it", env: []string{"CCM_FACTS_DIRS=" + filepath.Join(dir, "bad")}, args: []string{"facts"},
			wantCode: 2, wantStderr: filepath.Join(dir, "bad", "facts.json")},
		{name: "too many arguments", env: env, args: []string{"facts", "a", "b"}, wantCode: 2, wantStderr: "accepts at most 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ccmtest.Run(t, dir, tt.env, tt.args...)
			if res.Code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", res.Code, tt.wantCode, res.Stdout, res.Stderr)
			}
			if tt.wantStdout != "" && res.Stdout != tt.wantStdout {
				t.Errorf("stdout = %q, want %q", res.Stdout, tt.wantStdout)
			}
			if tt.check != nil {
				tt.check(t, res.Stdout)
			}
			if !strings.Contains(res.Stderr, tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", res.Stderr, tt.wantStderr)
			}
		})
	}
}
