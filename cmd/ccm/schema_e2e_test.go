package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/internal/testing/ccmtest"
)

// TestSchemaValidationE2E checks, through the binary, that properties are
// checked against the built-in plugins' schemas at load (every problem, with
// file:line and type#name, exit 2, nothing changed), and that
// NO_SCHEMA_VALIDATION=1 skips only that check, with a warning, leaving
// ccm_validate to reject the manifest.
func TestSchemaValidationE2E(t *testing.T) {
	dir := t.TempDir()
	manifest := "ccm:\n  resources:\n    - exec:\n" +
		"        - /usr/bin/touch " + filepath.Join(dir, "ran") + ":\n" +
		"            returns: [0, 300]\n" +
		"            environment: [\"A=1\", \"B\"]\n" +
		"            logoutput: \"yes\"\n" +
		"    - service:\n        - nginx: {enable: maybe}\n"
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  []string
		want []string
		not  []string
	}{
		{
			name: "schema",
			want: []string{
				`m.yaml:4: exec#/usr/bin/touch ` + filepath.Join(dir, "ran") + `: property "environment[1]": must match the pattern ^[^=]+=[\s\S]+$ (KEY=VALUE)`,
				`: property "logoutput": must be a boolean, got a string`,
				`: property "returns[1]": must be at most 255`,
				`m.yaml:9: service#nginx: property "enable": must be a boolean, got a string`,
			},
			not: []string{"NO_SCHEMA_VALIDATION"},
		},
		{
			name: "NO_SCHEMA_VALIDATION",
			env:  []string{"NO_SCHEMA_VALIDATION=1"},
			want: []string{
				"ccm: warning: NO_SCHEMA_VALIDATION is set",
				`environment entry "B" must be KEY=VALUE`,
				`m.yaml:9: service#nginx: property "enable" must be a boolean`,
			},
			not: []string{"must be at most 255"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := ccmtest.Run(t, dir, tc.env, "apply", "m.yaml")
			if res.Code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.Stderr)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(res.Stderr, n) {
					t.Errorf("stderr has %q:\n%s", n, res.Stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "ran")); !os.IsNotExist(err) {
				t.Fatal("a resource ran although the manifest did not load")
			}
		})
	}
}
