package main

import (
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/schematest"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestValidateRejects(t *testing.T) {
	cases := []struct {
		name     string
		props    map[string]any
		provider string
		want     string
	}{
		{"missing name", map[string]any{"ensure": "running"}, "", "name is required"},
		{"name not a string", map[string]any{"name": 5}, "", "name is required"},
		{"name with a space", map[string]any{"name": "my app"}, "", `name "my app" has ' ' at byte 2`},
		{"name with a slash", map[string]any{"name": "../etc"}, "", `name "../etc" has '/' at byte 2`},
		{"name with a semicolon", map[string]any{"name": "a;reboot"}, "", `has ';'`},
		{"name with a newline", map[string]any{"name": "a\nb"}, "", `has '\n'`},
		{"name like a flag", map[string]any{"name": "--force"}, "", `name "--force" must not start with "-"`},
		{"bad ensure", map[string]any{"name": "app", "ensure": "present"}, "", `ensure "present" is not valid for service; use "running" or "stopped"`},
		{"ensure not a string", map[string]any{"name": "app", "ensure": true}, "", `property "ensure" must be a string, got a boolean`},
		{"enable as string", map[string]any{"name": "app", "enable": "true"}, "", `property "enable" must be a boolean, got a string`},
		{"enable as number", map[string]any{"name": "app", "enable": float64(1)}, "", `property "enable" must be a boolean, got a number`},
		{"unknown property with hint", map[string]any{"name": "app", "enabled": true}, "", `unknown property "enabled"; did you mean "enable"?`},
		{"unknown property", map[string]any{"name": "app", "hasstatus": true}, "", `unknown property "hasstatus"`},
		{"unknown provider", map[string]any{"name": "app"}, "sysv", `provider "sysv" is not available for service; use "systemd"`},
	}
	s := &serviceType{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := s.Validate(abi.ValidateRequest{Properties: tc.props, Provider: tc.provider})
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
		{"name only", map[string]any{"name": "nginx"}, ""},
		{"full unit name", map[string]any{"name": "nginx.service"}, ""},
		{"template unit", map[string]any{"name": "getty@tty1.service"}, ""},
		{"every allowed character", map[string]any{"name": "a-Z_0.9+x:y~z@i"}, ""},
		{"stopped and disabled", map[string]any{"name": "app", "ensure": "stopped", "enable": false}, "systemd"},
		{"running and enabled", map[string]any{"name": "app", "ensure": "running", "enable": true}, ""},
		{"null enable is unset", map[string]any{"name": "app", "enable": nil}, ""},
	}
	s := &serviceType{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if errs := s.Validate(abi.ValidateRequest{Properties: tc.props, Provider: tc.provider}); len(errs) > 0 {
				t.Fatalf("unexpected errors: %q", errs)
			}
			schematest.Accepts(t, s.Info(), tc.props)
		})
	}
}

func TestInfo(t *testing.T) {
	info := (&serviceType{}).Info()
	if info.Type != "service" || info.ABI != abi.Version || info.DefaultEnsure != "running" || !info.Refresh || info.Batch || len(info.Deferred) != 0 {
		t.Fatalf("unexpected info %+v", info)
	}
	if strings.Join(info.Providers, ",") != "systemd" || strings.Join(info.Ensure, ",") != "running,stopped" {
		t.Fatalf("providers %v ensure %v", info.Providers, info.Ensure)
	}
	c := info.Capabilities
	if strings.Join(c.Exec, ",") != "/usr/bin/systemctl,/bin/systemctl" || strings.Join(c.FSRead, ",") != systemdDir || len(c.FSWrite) != 0 || len(c.Net) != 0 || c.Users {
		t.Fatalf("capabilities %+v", c)
	}
	want := "/usr/bin/systemctl is-active,/usr/bin/systemctl is-enabled,/bin/systemctl is-active,/bin/systemctl is-enabled"
	if strings.Join(c.ProbeExec, ",") != want {
		t.Fatalf("probe_exec %q", c.ProbeExec)
	}
}
