package main

import (
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/schematest"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func withProps(mod func(p map[string]any)) map[string]any {
	p := map[string]any{"name": "reload", "command": "/usr/bin/systemctl reload app"}
	if mod != nil {
		mod(p)
	}
	return p
}

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name     string
		props    map[string]any
		provider string
		want     string
	}{
		{"missing name", withProps(func(p map[string]any) { delete(p, "name") }), "", "name is required"},
		{"ensure absent", withProps(func(p map[string]any) { p["ensure"] = "absent" }), "", "ensure absent is not supported by exec"},
		{"ensure other", withProps(func(p map[string]any) { p["ensure"] = "running" }), "", `ensure "running" is not valid for exec; use present`},
		{"empty command", withProps(func(p map[string]any) { p["command"] = "  " }), "", "command must not be empty"},
		{"unterminated quote in command", withProps(func(p map[string]any) { p["command"] = `echo "hi` }), "", `command "echo \"hi": unterminated quote or escape`},
		{"unterminated quote in name", map[string]any{"name": `echo 'hi`}, "", "unterminated quote or escape"},
		{"unterminated quote in onlyif", withProps(func(p map[string]any) { p["onlyif"] = `test -f 'x` }), "", `onlyif "test -f 'x": unterminated quote or escape`},
		{"unterminated quote in unless", withProps(func(p map[string]any) { p["unless"] = `grep "x` }), "", "unless"},
		{"relative cwd", withProps(func(p map[string]any) { p["cwd"] = "tmp" }), "", `cwd "tmp" must be an absolute path`},
		{"environment without =", withProps(func(p map[string]any) { p["environment"] = []any{"FOO"} }), "", `environment entry "FOO" must be KEY=VALUE`},
		{"environment empty key", withProps(func(p map[string]any) { p["environment"] = []any{"=x"} }), "", `environment entry "=x"`},
		{"environment empty value", withProps(func(p map[string]any) { p["environment"] = []any{"FOO="} }), "", `environment entry "FOO="`},
		{"environment not a list", withProps(func(p map[string]any) { p["environment"] = "FOO=bar" }), "", `property "environment" must be a list of strings`},
		{"environment PATH and path", withProps(func(p map[string]any) { p["path"] = "/bin"; p["environment"] = []any{"PATH=/x"} }), "", "environment sets PATH and so does the path property"},
		{"relative path entry", withProps(func(p map[string]any) { p["path"] = "/usr/bin:bin" }), "", `path entry "bin" must be an absolute directory`},
		{"empty path entry", withProps(func(p map[string]any) { p["path"] = "/usr/bin::/bin" }), "", `path entry ""`},
		{"returns not integers", withProps(func(p map[string]any) { p["returns"] = []any{0, "1"} }), "", `property "returns" item 1 must be an integer`},
		{"returns fractional", withProps(func(p map[string]any) { p["returns"] = []any{1.5} }), "", "must be an integer"},
		{"returns empty", withProps(func(p map[string]any) { p["returns"] = []any{} }), "", "returns must list at least one exit code"},
		{"timeout without unit", withProps(func(p map[string]any) { p["timeout"] = "10" }), "", "timeout: duration \"10\": each number needs a unit"},
		{"timeout zero", withProps(func(p map[string]any) { p["timeout"] = "0s" }), "", `timeout "0s" must be positive`},
		{"timeout number", withProps(func(p map[string]any) { p["timeout"] = float64(10) }), "", `property "timeout" must be a string`},
		{"unclean cwd", withProps(func(p map[string]any) { p["cwd"] = "/tmp/../var/" }), "", `cwd "/tmp/../var/" is not canonical; use "/var"`},
		{"unclean creates", withProps(func(p map[string]any) { p["creates"] = "/tmp//x" }), "", `creates "/tmp//x" is not canonical; use "/tmp/x"`},
		{"relative creates", withProps(func(p map[string]any) { p["creates"] = "x" }), "", `creates "x" must be an absolute path`},
		{"refresh spellings disagree", withProps(func(p map[string]any) { p["refreshonly"] = true; p["refresh_only"] = false }), "", "refreshonly (true) and refresh_only (false) disagree"},
		{"refreshonly not bool", withProps(func(p map[string]any) { p["refreshonly"] = "yes" }), "", `property "refreshonly" must be a boolean`},
		{"logoutput not bool", withProps(func(p map[string]any) { p["logoutput"] = 1 }), "", `property "logoutput" must be a boolean`},
		{"unknown property with hint", withProps(func(p map[string]any) { p["refresh_onyl"] = true }), "", `unknown property "refresh_onyl"; did you mean "refresh_only"?`},
		{"unknown property", withProps(func(p map[string]any) { p["user"] = "root" }), "", `unknown property "user"`},
		{"unknown provider", withProps(nil), "systemd", `provider "systemd" is not available for exec`},
	}
	e := &execType{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := e.Validate(abi.ValidateRequest{Properties: tc.props, Provider: tc.provider})
			if joined := strings.Join(errs, "\n"); !strings.Contains(joined, tc.want) {
				t.Fatalf("errors %q do not contain %q", errs, tc.want)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	cases := []struct {
		name     string
		props    map[string]any
		provider string
	}{
		{"name is the command", map[string]any{"name": "/usr/bin/true"}, ""},
		{"everything", withProps(func(p map[string]any) {
			p["ensure"] = "present"
			p["cwd"] = "/tmp"
			p["environment"] = []any{"FOO=bar", "A=b=c"}
			p["path"] = "/usr/bin:/bin"
			p["returns"] = []any{float64(0), float64(2)}
			p["timeout"] = "1d"
			p["creates"] = "/tmp/x"
			p["onlyif"] = "test -d /tmp"
			p["unless"] = "test -f /tmp/x"
			p["refreshonly"] = true
			p["refresh_only"] = true
			p["logoutput"] = true
		}), ""},
		{"single returns value", withProps(func(p map[string]any) { p["returns"] = float64(3) }), ""},
		{"shell provider skips quote splitting", withProps(func(p map[string]any) { p["command"] = `echo "$(date)" | tee x` }), "shell"},
		{"shell provider multi-line command", withProps(func(p map[string]any) { p["command"] = "set -e\nfor i in 1 2; do\n  echo $i\ndone\n" }), "shell"},
		{"templated command is checked at apply", withProps(func(p map[string]any) { p["command"] = `{{ Data.cmd }} "` }), ""},
		{"templated cwd", withProps(func(p map[string]any) { p["cwd"] = "${ Data.dir }" }), ""},
		{"templated creates", withProps(func(p map[string]any) { p["creates"] = "{{ Data.marker }}" }), ""},
		{"templated environment list", withProps(func(p map[string]any) { p["environment"] = "${ Data.env }" }), ""},
		{"templated environment entry", withProps(func(p map[string]any) { p["environment"] = []any{"{{ Data.kv }}"} }), ""},
		{"environment PATH without path property", withProps(func(p map[string]any) { p["environment"] = []any{"PATH=/opt/bin"} }), ""},
		{"refresh_only alone", withProps(func(p map[string]any) { p["refresh_only"] = true }), ""},
		{"quoted arguments", withProps(func(p map[string]any) { p["command"] = `/bin/echo 'a b' "c \"d\""` }), "posix"},
	}
	e := &execType{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if errs := e.Validate(abi.ValidateRequest{Properties: tc.props, Provider: tc.provider}); len(errs) > 0 {
				t.Fatalf("unexpected errors: %q", errs)
			}
			schematest.Accepts(t, e.Info(), tc.props)
		})
	}
}

func TestInfo(t *testing.T) {
	info := (&execType{}).Info()
	if info.Type != "exec" || info.ABI != abi.Version || info.DefaultEnsure != "present" || !info.Refresh {
		t.Fatalf("unexpected info %+v", info)
	}
	if strings.Join(info.Providers, ",") != "posix,shell" || strings.Join(info.Ensure, ",") != "present" {
		t.Fatalf("providers %v ensure %v", info.Providers, info.Ensure)
	}
	if strings.Join(info.Deferred, ",") != "command,cwd,environment,creates,onlyif,unless" {
		t.Fatalf("deferred %v", info.Deferred)
	}
	c := info.Capabilities
	if len(c.Exec) != 1 || c.Exec[0] != "/**" || len(c.FSRead) != 1 || c.FSRead[0] != "/**" || len(c.FSWrite) != 0 || c.Users {
		t.Fatalf("capabilities %+v", c)
	}
}
