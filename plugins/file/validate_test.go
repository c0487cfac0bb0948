package main

import (
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/plugins/internal/schematest"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// valid returns a complete, valid property set that cases then modify.
func valid(mod func(p map[string]any)) map[string]any {
	p := map[string]any{
		"name": "/etc/motd", "ensure": "present", "content": "hello\n",
		"owner": "root", "group": "root", "mode": "0644",
	}
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
		{"relative name", valid(func(p map[string]any) { p["name"] = "etc/motd" }), "", `name "etc/motd" must be an absolute path`},
		{"dot dot in name", valid(func(p map[string]any) { p["name"] = "/etc/../motd" }), "", `not canonical; use "/motd"`},
		{"trailing slash", valid(func(p map[string]any) { p["name"] = "/etc/motd/" }), "", "not canonical"},
		{"dot in name", valid(func(p map[string]any) { p["name"] = "/etc/./motd" }), "", "not canonical"},
		{"missing name", valid(func(p map[string]any) { delete(p, "name") }), "", "name is required"},
		{"bad ensure", valid(func(p map[string]any) { p["ensure"] = "latest" }), "", `ensure "latest" is not valid for file; use one of present, absent, directory`},
		{"content and source", valid(func(p map[string]any) { p["source"] = "x" }), "", "content and source are mutually exclusive"},
		{"null content and source", valid(func(p map[string]any) { p["content"] = nil; p["source"] = "" }), "", "source must not be empty"},
		{"content with directory", valid(func(p map[string]any) { p["ensure"] = "directory" }), "", "only valid with ensure present"},
		{"missing owner", valid(func(p map[string]any) { delete(p, "owner") }), "", "owner is required unless ensure is absent"},
		{"empty owner", valid(func(p map[string]any) { p["owner"] = "" }), "", "owner is required"},
		{"missing group", valid(func(p map[string]any) { delete(p, "group") }), "", "group is required unless ensure is absent"},
		{"missing mode", valid(func(p map[string]any) { delete(p, "mode") }), "", "mode is required unless ensure is absent"},
		{"mode not octal", valid(func(p map[string]any) { p["mode"] = "0689" }), "", `mode "0689" must be 3 or 4 octal digits`},
		{"mode too short", valid(func(p map[string]any) { p["mode"] = "64" }), "", "3 or 4 octal digits"},
		{"mode too long", valid(func(p map[string]any) { p["mode"] = "00644" }), "", "3 or 4 octal digits"},
		{"mode with sticky bit", valid(func(p map[string]any) { p["mode"] = "1777" }), "", `mode "1777" is above 0777`},
		{"mode as number", valid(func(p map[string]any) { p["mode"] = float64(420) }), "", "mode must be a quoted octal string"},
		{"mode empty", valid(func(p map[string]any) { p["mode"] = "" }), "", "3 or 4 octal digits"},
		{"force with present", valid(func(p map[string]any) { p["force"] = true }), "", "force is only valid with ensure absent"},
		{"force on root", map[string]any{"name": "/", "ensure": "absent", "force": true}, "", `force is not allowed for "/"`},
		{"force not bool", map[string]any{"name": "/x", "ensure": "absent", "force": "yes"}, "", `property "force" must be a boolean`},
		{"unknown property with hint", valid(func(p map[string]any) { p["contnet"] = "x" }), "", `unknown property "contnet"; did you mean "content"?`},
		{"unknown property", valid(func(p map[string]any) { p["checksum"] = "abc" }), "", `unknown property "checksum"`},
		{"owner is a list", valid(func(p map[string]any) { p["owner"] = []any{"root"} }), "", `property "owner" must be a string`},
		{"content is a map", valid(func(p map[string]any) { p["content"] = map[string]any{} }), "", `property "content" must be a string`},
		{"unknown provider", valid(nil), "shell", `provider "shell" is not available for file`},
	}
	ft := newFileType()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ft.Validate(abi.ValidateRequest{Properties: tc.props, Provider: tc.provider})
			joined := strings.Join(errs, "\n")
			if !strings.Contains(joined, tc.want) {
				t.Fatalf("errors %q do not contain %q", errs, tc.want)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	cases := []struct {
		name  string
		props map[string]any
	}{
		{"content", valid(nil)},
		{"empty content is an empty file", valid(func(p map[string]any) { p["content"] = "" })},
		{"null content is attribute-only", valid(func(p map[string]any) { p["content"] = nil })},
		{"no content is attribute-only", valid(func(p map[string]any) { delete(p, "content") })},
		{"relative source", valid(func(p map[string]any) { delete(p, "content"); p["source"] = "files/motd" })},
		{"templated source", valid(func(p map[string]any) { delete(p, "content"); p["source"] = "{{ Data.src }}" })},
		{"multi-line content", valid(func(p map[string]any) { p["content"] = "a\nb\n\tc: d\n" })},
		{"numeric content from a template", valid(func(p map[string]any) { p["content"] = float64(8080) })},
		{"three digit mode", valid(func(p map[string]any) { p["mode"] = "600" })},
		{"0o prefix", valid(func(p map[string]any) { p["mode"] = "0o644" })},
		{"0O prefix with four digits", valid(func(p map[string]any) { p["mode"] = "0O0755" })},
		{"numeric owner and group", valid(func(p map[string]any) { p["owner"] = "1000"; p["group"] = float64(1000) })},
		{"ensure defaults to present", valid(func(p map[string]any) { delete(p, "ensure") })},
		{"directory", map[string]any{"name": "/srv/app", "ensure": "directory", "owner": "root", "group": "root", "mode": "0755"}},
		{"absent needs no attributes", map[string]any{"name": "/srv/app", "ensure": "absent"}},
		{"absent with force", map[string]any{"name": "/srv/app", "ensure": "absent", "force": true}},
		{"absent ignores attributes", map[string]any{"name": "/srv/app", "ensure": "absent", "owner": "root", "mode": "0644", "content": "x"}},
		{"force false with present", valid(func(p map[string]any) { p["force"] = false })},
		{"root directory", map[string]any{"name": "/", "ensure": "directory", "owner": "root", "group": "root", "mode": "0755"}},
	}
	ft := newFileType()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if errs := ft.Validate(abi.ValidateRequest{Properties: tc.props, Provider: "posix"}); len(errs) > 0 {
				t.Fatalf("unexpected errors: %q", errs)
			}
			schematest.Accepts(t, ft.Info(), tc.props)
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	errs := newFileType().Validate(abi.ValidateRequest{Properties: map[string]any{
		"name": "rel", "ensure": "present", "mode": "999", "typo": 1,
	}})
	if len(errs) != 5 { // name, owner, group, mode, typo
		t.Fatalf("want 5 errors, got %d: %q", len(errs), errs)
	}
}

func TestInfo(t *testing.T) {
	info := newFileType().Info()
	if info.Type != "file" || info.ABI != abi.Version || info.DefaultEnsure != "present" || info.Refresh {
		t.Fatalf("unexpected info %+v", info)
	}
	if strings.Join(info.Ensure, ",") != "present,absent,directory" || strings.Join(info.Providers, ",") != "posix" {
		t.Fatalf("ensure %v providers %v", info.Ensure, info.Providers)
	}
	if strings.Join(info.Deferred, ",") != "content,source" {
		t.Fatalf("deferred %v", info.Deferred)
	}
	c := info.Capabilities
	if !c.Users || len(c.FSRead) != 1 || c.FSRead[0] != "/**" || len(c.FSWrite) != 1 || c.FSWrite[0] != "/**" || len(c.Exec) != 0 {
		t.Fatalf("capabilities %+v", c)
	}
}
