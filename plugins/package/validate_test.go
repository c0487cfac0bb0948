package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/schematest"
	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name     string
		props    map[string]any
		provider string
		want     string // "" = valid
	}{
		{"present", map[string]any{"name": "coreutils", "ensure": "present"}, "", ""},
		{"latest apt", map[string]any{"name": "g++", "ensure": "latest"}, "apt", ""},
		{"debian version with epoch and tilde", map[string]any{"name": "libc6", "ensure": "1:2.36-9~bpo+1"}, "", ""},
		{"rpm version", map[string]any{"name": "bash", "ensure": "5.1.8-9.el9"}, "dnf", ""},
		{"numeric version from yaml", map[string]any{"name": "zsh", "ensure": 5.9}, "", ""},
		{"missing name", map[string]any{"ensure": "present"}, "", "name is required"},
		{"name with space", map[string]any{"name": "a b", "ensure": "present"}, "", `name "a b" may only hold`},
		{"name with slash", map[string]any{"name": "../x", "ensure": "present"}, "", `name "../x" may only hold`},
		{"name with shell metacharacter", map[string]any{"name": "x;rm", "ensure": "present"}, "", "may only hold"},
		{"name that is an option", map[string]any{"name": "--allow-unauthenticated", "ensure": "present"}, "", "must not start with '-'"},
		{"missing ensure", map[string]any{"name": "x"}, "", "ensure is required"},
		{"version with quote", map[string]any{"name": "x", "ensure": "1.0'"}, "", `ensure "1.0'" is not present, absent, latest or a version`},
		{"version with space", map[string]any{"name": "x", "ensure": "1.0 2"}, "", "is not present, absent, latest or a version"},
		{"misspelt ensure is not a version", map[string]any{"name": "x", "ensure": "presnet"}, "", `ensure "presnet" is not present, absent, latest or a version (a version starts with a digit`},
		{"version with option-like epoch", map[string]any{"name": "x", "ensure": "-1"}, "", "is not present, absent, latest or a version"},
		{"ensure not text", map[string]any{"name": "x", "ensure": []any{"a"}}, "", `property "ensure" must be a string`},
		{"unknown provider", map[string]any{"name": "x", "ensure": "present"}, "yum", `provider "yum" is not available for package`},
		{"unknown property", map[string]any{"name": "x", "ensure": "present", "version": "1"}, "", `unknown property "version"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := (&packageType{}).Validate(abi.ValidateRequest{Properties: tc.props, Provider: tc.provider})
			joined := strings.Join(errs, "\n")
			if tc.want == "" && len(errs) > 0 || tc.want != "" && !strings.Contains(joined, tc.want) {
				t.Fatalf("errors %q, want %q", errs, tc.want)
			}
			// The engine rejects a non-string ensure before any validation.
			if _, isString := tc.props["ensure"].(string); tc.want == "" && isString {
				schematest.Accepts(t, (&packageType{}).Info(), tc.props)
			}
		})
	}
}

func TestApplyRejectsInvalidBeforeAnyCall(t *testing.T) {
	h := &scriptHost{t: t}
	res := (&packageType{}).Apply(h, abi.Request{Name: "x;y", Properties: map[string]any{"name": "x;y", "ensure": "present"}})
	wantError(t, res, "invalid properties: name")
	if len(h.ran) > 0 {
		t.Fatalf("ran %q", h.ran)
	}
}

func TestChooseProvider(t *testing.T) {
	const fam = "facts.host.info.platformFamily"
	cases := []struct {
		name   string
		facts  map[string]any
		script []step
		want   string
		err    string
	}{
		{name: "debian fact", facts: map[string]any{fam: "debian"}, want: "apt"},
		{name: "rhel fact", facts: map[string]any{fam: "rhel"}, want: "dnf"},
		{name: "fedora fact", facts: map[string]any{fam: "fedora"}, want: "dnf"},
		{
			name: "unknown family probes dpkg-query first", facts: map[string]any{fam: "suse"},
			script: []step{{argv: "/usr/bin/dpkg-query --version", out: abi.ExecResponse{Stdout: "Debian dpkg-query 1.21\n"}}},
			want:   "apt",
		},
		{
			name: "no fact, no dpkg-query, rpm answers",
			script: []step{
				{argv: "/usr/bin/dpkg-query --version", err: &abi.CallError{Code: abi.CodeNotFound, Message: "no such file"}},
				{argv: "/usr/bin/rpm --version", out: abi.ExecResponse{Stdout: "RPM version 4.16\n"}},
			},
			want: "dnf",
		},
		{
			name: "nothing suits",
			script: []step{
				{argv: "/usr/bin/dpkg-query --version", err: &abi.CallError{Code: abi.CodeNotFound, Message: "x"}},
				{argv: "/usr/bin/rpm --version", err: &abi.CallError{Code: abi.CodeNotFound, Message: "x"}},
			},
			err: "no package provider suits this host",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &scriptHost{t: t, readOnly: true, facts: tc.facts, script: tc.script}
			p, err := choose(h, "")
			h.done()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || p.name() != tc.want {
				t.Fatalf("chose %v (%v), want %s", p, err, tc.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	h := &scriptHost{t: t, readOnly: true, script: []step{dpkg("libc6", "libc6 2.36-9+deb12u4 amd64 installed\n")}}
	resp := (&packageType{}).Status(h, abi.Request{Name: "libc6", Provider: "apt"})
	h.done()
	meta, _ := resp.State["metadata"].(map[string]any)
	ext, _ := meta["extended"].(map[string]any)
	if resp.Error != "" || resp.FinalEnsure != "2.36-9+deb12u4" || meta["arch"] != "amd64" || meta["version"] != "2.36-9+deb12u4" || ext["status"] != "installed" {
		t.Fatalf("status %+v", resp)
	}
}

func TestInfo(t *testing.T) {
	info := (&packageType{}).Info()
	if info.Type != "package" || info.ABI != abi.Version || info.DefaultEnsure != "" || info.Refresh || info.Batch {
		t.Fatalf("info %+v", info)
	}
	if !slices.Equal(info.Providers, []string{"apt", "dnf"}) || !slices.Equal(info.Ensure, []string{"present", "absent", "latest"}) {
		t.Fatalf("providers %v ensure %v", info.Providers, info.Ensure)
	}
	c := info.Capabilities
	for _, exe := range c.Exec {
		if !strings.HasPrefix(exe, "/usr/bin/") && !strings.HasPrefix(exe, "/bin/") || strings.HasSuffix(exe, "/sh") {
			t.Fatalf("exec capability %q", exe)
		}
	}
	if !slices.Contains(c.Exec, "/bin/dpkg-query") || !slices.Contains(c.ProbeExec, "/bin/rpm -q") || len(c.FSRead)+len(c.FSWrite)+len(c.Net) > 0 || c.Users {
		t.Fatalf("capabilities %+v", c)
	}
}
