package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseResources(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Resource
	}{
		{
			name: "list form with null and empty properties",
			src: `
ccm:
  resources:
    - exec:
        - /usr/bin/true: {}
        - /usr/bin/false:
`,
			want: []Resource{
				{Type: "exec", Name: "/usr/bin/true", Line: 5, Properties: map[string]any{}},
				{Type: "exec", Name: "/usr/bin/false", Line: 6, Properties: map[string]any{}},
			},
		},
		{
			name: "direct form takes name from the map",
			src: `
ccm:
  resources:
    - exec:
        name: say_hi
        command: /bin/echo hi
`,
			want: []Resource{
				{Type: "exec", Name: "say_hi", Line: 4, Properties: map[string]any{"command": "/bin/echo hi"}},
			},
		},
		{
			name: "list-form key wins over name inside properties",
			src: `
ccm:
  resources:
    - exec:
        - real: {name: ignored, command: x}
`,
			want: []Resource{
				{Type: "exec", Name: "real", Line: 5, Properties: map[string]any{"command": "x"}},
			},
		},
		{
			name: "defaults apply to their block only, in any position, resource values win",
			src: `
ccm:
  resources:
    - file:
        - /a: {mode: "0600"}
        - defaults: {owner: app, mode: "0644", ensure: present, environment: [A=1]}
        - /b: {environment: [B=2]}
    - file:
        - /c: {ensure: absent}
`,
			want: []Resource{
				{Type: "file", Name: "/a", Line: 5, Properties: map[string]any{"owner": "app", "mode": "0600", "ensure": "present", "environment": []any{"A=1"}}},
				{Type: "file", Name: "/b", Line: 7, Properties: map[string]any{"owner": "app", "mode": "0644", "ensure": "present", "environment": []any{"B=2"}}},
				{Type: "file", Name: "/c", Line: 9, Properties: map[string]any{"ensure": "absent"}},
			},
		},
		{
			name: "control merged per key from defaults",
			src: `
ccm:
  resources:
    - exec:
        - defaults: {control: {if: Data.on}}
        - a: {control: {unless: Data.off}}
        - b: {control: {if: "false"}}
`,
			want: []Resource{
				{Type: "exec", Name: "a", Line: 6, Properties: map[string]any{}, Control: Control{If: "Data.on", Unless: "Data.off"}},
				{Type: "exec", Name: "b", Line: 7, Properties: map[string]any{}, Control: Control{If: "false"}},
			},
		},
		{
			name: "common properties split out",
			src: `
ccm:
  resources:
    - service:
        - httpd:
            ensure: running
            alias: web
            provider: systemd
            require: [package#httpd]
            subscribe: [file#/etc/httpd.conf, "apply#child.yaml"]
            control: {if: "true", unless: 1}
`,
			want: []Resource{{
				Type: "service", Name: "httpd", Line: 5,
				Properties: map[string]any{"ensure": "running"},
				Alias:      "web", Provider: "systemd",
				Require:      []string{"package#httpd"},
				Subscribe:    []string{"file#/etc/httpd.conf", "apply#child.yaml"},
				HasSubscribe: true,
				Control:      Control{If: "true", Unless: "1"},
			}},
		},
		{
			name: "empty subscribe is still present",
			src: `
ccm:
  resources:
    - file:
        - /x: {subscribe: []}
`,
			want: []Resource{{Type: "file", Name: "/x", Line: 5, Properties: map[string]any{}, Subscribe: []string{}, HasSubscribe: true}},
		},
		{
			name: "numeric names and keys are stringified",
			src: `
ccm:
  resources:
    - package:
        - 7zip: {ensure: present}
        - 123: {ensure: present}
    - package: {name: 456}
`,
			want: []Resource{
				{Type: "package", Name: "7zip", Line: 5, Properties: map[string]any{"ensure": "present"}},
				{Type: "package", Name: "123", Line: 6, Properties: map[string]any{"ensure": "present"}},
				{Type: "package", Name: "456", Line: 7, Properties: map[string]any{}},
			},
		},
		{
			name: "JSON manifest",
			src:  `{"ccm": {"resources": [{"exec": [{"/bin/true": {"timeout": "10s", "returns": [0, 1]}}]}]}}`,
			want: []Resource{{Type: "exec", Name: "/bin/true", Line: 1, Properties: map[string]any{"timeout": "10s", "returns": []any{0, 1}}}},
		},
		{
			name: "type with digits and underscore",
			src: `
ccm:
  resources:
    - my_type2:
        - x: {}
`,
			want: []Resource{{Type: "my_type2", Name: "x", Line: 5, Properties: map[string]any{}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.src), "site.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(doc.Resources, tt.want) {
				t.Fatalf("resources:\n got %#v\nwant %#v", doc.Resources, tt.want)
			}
		})
	}
}

func TestParseMergeKeysInProperties(t *testing.T) {
	src := `
ccm:
  resources:
    - file:
        - /base: &common {owner: root, group: wheel, mode: "0644"}
        - /x: {<<: *common, group: root}
`
	doc, err := Parse([]byte(src), "site.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := map[string]any{"owner": "root", "group": "root", "mode": "0644"}
	if got := doc.Resources[1].Properties; !reflect.DeepEqual(got, want) {
		t.Fatalf("properties: got %v want %v", got, want)
	}
}

func TestParseDocumentSections(t *testing.T) {
	src := `
data:
  package_name: httpd
  port: 8080
  ratio: 0.5
  on: true
  none: ~
  date: 2024-01-02
  list: [a, 1]
hierarchy:
  order:
    - os:${ lookup('facts.host.info.platformFamily') }
    - default
  merge: deep
overrides:
  os:debian:
    package_name: apache2
  default:
ccm:
  fail_on_error: true
  pre_message: "starting {{ Data.package_name }}"
  post_message: done
  resources:
    - package:
        - "${ Data.package_name }": {ensure: present}
`
	doc, err := Parse([]byte(src), "site.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	wantData := map[string]any{
		"package_name": "httpd", "port": 8080, "ratio": 0.5, "on": true, "none": nil,
		"date": "2024-01-02", "list": []any{"a", 1},
	}
	if !reflect.DeepEqual(doc.Data, wantData) {
		t.Errorf("data: got %#v want %#v", doc.Data, wantData)
	}
	wantH := map[string]any{"order": []any{"os:${ lookup('facts.host.info.platformFamily') }", "default"}, "merge": "deep"}
	if !reflect.DeepEqual(doc.Hierarchy, wantH) {
		t.Errorf("hierarchy: got %#v want %#v", doc.Hierarchy, wantH)
	}
	wantO := map[string]any{"os:debian": map[string]any{"package_name": "apache2"}, "default": nil}
	if !reflect.DeepEqual(doc.Overrides, wantO) {
		t.Errorf("overrides: got %#v want %#v", doc.Overrides, wantO)
	}
	if !doc.FailOnError || doc.PreMessage != "starting {{ Data.package_name }}" || doc.PostMessage != "done" {
		t.Errorf("ccm section: got fail_on_error=%v pre=%q post=%q", doc.FailOnError, doc.PreMessage, doc.PostMessage)
	}
	if doc.File != "site.yaml" || len(doc.Resources) != 1 || doc.Resources[0].Name != "${ Data.package_name }" {
		t.Errorf("resources: got %#v", doc.Resources)
	}
}

func TestParseJetFile(t *testing.T) {
	doc, err := Parse([]byte("ccm:\n  resources_jet_file: resources.jet\n"), "site.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if doc.ResourcesJetFile != "resources.jet" || len(doc.Resources) != 0 {
		t.Fatalf("got jet=%q resources=%d", doc.ResourcesJetFile, len(doc.Resources))
	}
}

// Strings must reach plugins byte for byte: CCM cannot load
// any multi-line string).
func TestParseStringsByteExact(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{name: "double-quoted newline", yaml: `"x\n"`, want: "x\n"},
		{name: "double-quoted inner newline", yaml: `"a\nb"`, want: "a\nb"},
		{name: "lone newline", yaml: `"\n"`, want: "\n"},
		{name: "literal block", yaml: "|\n              Listen 8080\n", want: "Listen 8080\n"},
		{name: "literal block keep", yaml: "|+\n              a\n", want: "a\n\n"},
		{name: "literal block strip", yaml: "|-\n              a\n              b\n", want: "a\nb"},
		{name: "folded block", yaml: ">\n              a\n              b\n", want: "a b\n"},
		{name: "tabs and unicode", yaml: "\"\\tß ✓\"", want: "\tß ✓"},
		{name: "leading spaces kept", yaml: `"  indented"`, want: "  indented"},
		{name: "explicit str tag on a number", yaml: "!!str 0644", want: "0644"},
		{name: "template survives", yaml: `"{{ Data.x }}\n${ y }"`, want: "{{ Data.x }}\n${ y }"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "ccm:\n  resources:\n    - file:\n        - /tmp/x:\n            content: " + tt.yaml + "\n            mode: \"0644\"\n"
			doc, err := Parse([]byte(src), "site.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := doc.Resources[0].Properties["content"]; got != tt.want {
				t.Fatalf("content: got %q want %q", got, tt.want)
			}
		})
	}
}

func TestParseHealthChecks(t *testing.T) {
	src := `
ccm:
  resources:
    - exec:
        - x:
            health_checks:
              - command: /usr/lib/nagios/plugins/check_disk -w 10%
              - command: check_http
                name: web
                tries: 3
                try_sleep: 2s
                timeout: 1m
                format: nagios
              - goss_rules:
                  process:
                    sshd: {running: true}
              - goss_rules: "port: {}"
                try_sleep: 1d
`
	doc, err := Parse([]byte(src), "site.yaml")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := []HealthCheck{
		{Name: "check_disk", Command: "/usr/lib/nagios/plugins/check_disk -w 10%", Format: "nagios", Tries: 1, TrySleep: time.Second},
		{Name: "web", Command: "check_http", Format: "nagios", Tries: 3, TrySleep: 2 * time.Second, Timeout: time.Minute},
		{Name: "goss", Format: "goss", GossRules: map[string]any{"process": map[string]any{"sshd": map[string]any{"running": true}}}, Tries: 1, TrySleep: time.Second},
		{Name: "goss", Format: "goss", GossRules: "port: {}", Tries: 1, TrySleep: 24 * time.Hour},
	}
	if got := doc.Resources[0].HealthChecks; !reflect.DeepEqual(got, want) {
		t.Fatalf("health checks:\n got %#v\nwant %#v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	const head = "ccm:\n  resources:\n"
	tests := []struct {
		name     string
		src      string
		sentinel error
		want     string // substring of the message
	}{
		{name: "empty document", src: "", sentinel: ErrNoResources, want: "site.yaml: no resources: the manifest is empty"},
		{name: "comment only", src: "# nothing\n", sentinel: ErrNoResources, want: "empty"},
		{name: "no ccm section", src: "data: {a: 1}\n", sentinel: ErrNoResources, want: "no ccm section"},
		{name: "empty resources", src: "ccm:\n  resources: []\n", sentinel: ErrNoResources, want: "site.yaml:2: ccm.resources: no resources"},
		{name: "null resources", src: "ccm:\n  resources:\n", sentinel: ErrNoResources, want: "ccm.resources"},
		{name: "syntax error keeps line", src: "ccm:\n  resources:\n    - exec: [\n  bad: : x\n", sentinel: ErrSyntax, want: "site.yaml:"},
		{name: "two documents", src: head + "    - exec: [{a: {}}]\n---\nccm: {}\n", sentinel: ErrSyntax, want: "more than one YAML document"},
		{name: "not a map", src: "- a\n- b\n", sentinel: ErrInvalid, want: "a manifest is a map"},
		{name: "unknown top key", src: "common: {}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrUnknownKey, want: "site.yaml:1: common: unknown key; allowed: ccm, data, hierarchy, overrides"},
		{name: "ccm typo suggests", src: "ccm:\n  fail_on_eror: true\n  resources:\n    - exec: [{a: {}}]\n", sentinel: ErrUnknownKey, want: `site.yaml:2: ccm.fail_on_eror: unknown key; did you mean "fail_on_error"?`},
		{name: "fail_on_error not bool", src: "ccm:\n  fail_on_error: yes please\n  resources:\n    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "ccm.fail_on_error: invalid value: must be true or false"},
		{name: "pre_message not string", src: "ccm:\n  pre_message: [a]\n  resources:\n    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "ccm.pre_message"},
		{name: "resources and jet exclusive", src: "ccm:\n  resources_jet_file: r.jet\n  resources:\n    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "exclusive"},
		{name: "data not a map", src: "data: [1]\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "site.yaml:1: data: invalid value: must be a map, not a list"},
		{name: "hierarchy unknown key", src: "hierarchy: {order: [a], marge: deep}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrUnknownKey, want: `hierarchy.marge: unknown key; did you mean "merge"?`},
		{name: "hierarchy without order", src: "hierarchy: {merge: deep}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "hierarchy.order"},
		{name: "hierarchy bad merge", src: "hierarchy: {order: [a], merge: last}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "hierarchy.merge: invalid value: last; use first or deep"},
		{name: "hierarchy order entry not string", src: "hierarchy: {order: [[a]]}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "hierarchy.order[0]"},
		{name: "override not a map", src: "overrides: {default: 1}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "overrides.default"},
		{name: "duplicate map key", src: "data: {a: 1}\ndata: {a: 2}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrDuplicate, want: `site.yaml:2: duplicate: key "data" repeated; first at line 1`},
		{name: "duplicate nested key", src: "data:\n  x:\n    a: 1\n    a: 2\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrDuplicate, want: `site.yaml:4: data.x: duplicate: key "a" repeated; first at line 3`},
		{name: "bad type key", src: head + "    - File: [{a: {}}]\n", sentinel: ErrInvalid, want: `site.yaml:3: ccm.resources[0]: invalid value: resource type "File"`},
		{name: "two types in one item", src: head + "    - exec: [{a: {}}]\n      file: [{b: {}}]\n", sentinel: ErrInvalid, want: "has 2 keys"},
		{name: "block is null", src: head + "    - exec:\n", sentinel: ErrInvalid, want: "ccm.resources[0].exec"},
		{name: "entry with two keys", src: head + "    - exec:\n        - a: {}\n          b: {}\n", sentinel: ErrInvalid, want: "ccm.resources[0].exec[0]: invalid value: has 2 keys"},
		{name: "entry is a scalar", src: head + "    - exec:\n        - /bin/true\n", sentinel: ErrInvalid, want: "- /usr/bin/true: {}"},
		{name: "properties not a map", src: head + "    - exec:\n        - a: [1]\n", sentinel: ErrInvalid, want: "site.yaml:4: exec#a: invalid value: properties must be a map"},
		{name: "direct form without name", src: head + "    - exec:\n        command: x\n", sentinel: ErrInvalid, want: "needs a non-empty name"},
		{name: "two defaults", src: head + "    - exec:\n        - defaults: {}\n        - a: {}\n        - defaults: {}\n", sentinel: ErrDuplicate, want: "site.yaml:6: ccm.resources[0].exec[2]: duplicate: second defaults entry in this block; first at line 4"},
		{name: "defaults sets name", src: head + "    - exec:\n        - defaults: {name: x}\n        - a: {}\n", sentinel: ErrInvalid, want: "exec#a: name: invalid value: defaults cannot set name"},
		{name: "duplicate resource names both lines", src: head + "    - file:\n        - /x: {}\n    - file:\n        - /x: {}\n", sentinel: ErrDuplicate, want: "site.yaml:6: file#/x: duplicate: declared twice; first at line 4"},
		{name: "same name different types is fine", src: head + "    - file:\n        - /x: {}\n    - exec:\n        - /x: {}\n    - file: [{/x: {}}]\n", sentinel: ErrDuplicate, want: "site.yaml:7: file#/x"},
		{name: "alias collides with a name", src: head + "    - exec:\n        - a: {}\n        - b: {alias: a}\n", sentinel: ErrDuplicate, want: `exec#b: duplicate: alias "a" is already used by the resource at line 4`},
		{name: "require not a list", src: head + "    - exec:\n        - a: {require: package#x}\n", sentinel: ErrInvalid, want: "site.yaml:4: exec#a: require: invalid value: must be a list"},
		{name: "require bad ref", src: head + "    - exec:\n        - a: {require: [package-x]}\n", sentinel: ErrInvalid, want: `exec#a: require[0]: invalid value: reference "package-x" has no '#'`},
		{name: "subscribe bad ref type", src: head + "    - exec:\n        - a: {subscribe: [\"Pkg#x\"]}\n", sentinel: ErrInvalid, want: "subscribe[0]"},
		{name: "control unknown key", src: head + "    - exec:\n        - a: {control: {iff: x}}\n", sentinel: ErrUnknownKey, want: `exec#a: control.iff: unknown key; did you mean "if"?`},
		{name: "control not a map", src: head + "    - exec:\n        - a: {control: x}\n", sentinel: ErrInvalid, want: "exec#a: control: invalid value"},
		{name: "control if is a list", src: head + "    - exec:\n        - a: {control: {if: [x]}}\n", sentinel: ErrInvalid, want: "control.if"},
		{name: "register_when_stable unknown key", src: head + "    - exec:\n        - a:\n            register_when_stable:\n              - {cluster: c, service: s, protocol: p, address: 10.0.0.1, priority: 1, prio: 2}\n", sentinel: ErrUnknownKey, want: `site.yaml:6: exec#a: register_when_stable[0].prio: unknown key; allowed: address, annotations`},
		{name: "register_when_stable needs priority", src: head + "    - exec:\n        - a: {register_when_stable: [{cluster: c, service: s, protocol: p, address: 10.0.0.1}]}\n", sentinel: ErrInvalid, want: "exec#a: register_when_stable[0]: invalid value: priority is required"},
		{name: "register_when_stable not a list", src: head + "    - exec:\n        - a: {register_when_stable: {cluster: c}}\n", sentinel: ErrInvalid, want: "register_when_stable: invalid value: must be a list"},
		{name: "health check unknown key", src: head + "    - exec:\n        - a:\n            health_checks:\n              - {command: x, retries: 3}\n", sentinel: ErrUnknownKey, want: "site.yaml:6: exec#a: health_checks[0].retries: unknown key"},
		{name: "health check needs command", src: head + "    - exec:\n        - a: {health_checks: [{name: x}]}\n", sentinel: ErrInvalid, want: "needs command or goss_rules"},
		{name: "health check exclusive", src: head + "    - exec:\n        - a: {health_checks: [{command: x, goss_rules: {}}]}\n", sentinel: ErrInvalid, want: "exclusive"},
		{name: "health check format mismatch", src: head + "    - exec:\n        - a: {health_checks: [{command: x, format: goss}]}\n", sentinel: ErrInvalid, want: "health_checks[0].format"},
		{name: "health check zero tries", src: head + "    - exec:\n        - a: {health_checks: [{command: x, tries: 0}]}\n", sentinel: ErrInvalid, want: "health_checks[0].tries: invalid value: must be a whole number of at least 1"},
		{name: "health check numeric timeout", src: head + "    - exec:\n        - a: {health_checks: [{command: x, timeout: 10}]}\n", sentinel: ErrInvalid, want: "health_checks[0].timeout: invalid value: must be a duration string"},
		{name: "health check bad duration", src: head + "    - exec:\n        - a: {health_checks: [{command: x, try_sleep: 5 minutes}]}\n", sentinel: ErrInvalid, want: "try_sleep"},
		{name: "health checks not a list", src: head + "    - exec:\n        - a: {health_checks: {command: x}}\n", sentinel: ErrInvalid, want: "health_checks: invalid value: must be a list"},
		{name: "bad int", src: head + "    - exec:\n        - a: {timeout: !!int abc}\n", sentinel: ErrInvalid, want: "timeout"},
		{name: "alias to itself", src: "data: &a {x: *a}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "contains an alias to itself"},
		{name: "merge of itself", src: "data: &a {<<: *a}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "alias to itself"},
		{name: "merge of a scalar", src: "data: {<<: 1}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "merge key << needs a map"},
		{name: "complex key", src: "data: {[a]: 1}\n" + head + "    - exec: [{a: {}}]\n", sentinel: ErrInvalid, want: "map keys must be scalars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "site.yaml")
			if err == nil {
				t.Fatalf("want error containing %q", tt.want)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %q does not wrap %v", err, tt.sentinel)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "site.yaml" {
				t.Errorf("error %q is not a located *Error", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n got %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// An alias bomb must fail fast instead of building billions of values.
func TestParseAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		b.WriteString("a" + string(rune('a'+i)) + ": &a" + string(rune('a'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			if i == 1 {
				b.WriteString("*a0")
			} else {
				b.WriteString("*a" + string(rune('a'+i-1)))
			}
		}
		b.WriteString("]\n")
	}
	start := time.Now()
	_, err := DecodeValue([]byte(b.String()), "bomb.yaml")
	if err == nil || !strings.Contains(err.Error(), "too many values") {
		t.Fatalf("want a too-many-values error, got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("alias bomb took %v", d)
	}
}

func TestDecodeValue(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want any
	}{
		{name: "empty", src: "", want: nil},
		{name: "map", src: "a: {b: [1, 2.5, true, null, x]}", want: map[string]any{"a": map[string]any{"b": []any{1, 2.5, true, nil, "x"}}}},
		{name: "stringified keys", src: "1: a\ntrue: b\n0x10: c", want: map[string]any{"1": "a", "true": "b", "0x10": "c"}},
		{name: "hex int", src: "0x10", want: 16},
		{name: "huge int becomes float", src: "18446744073709551615", want: 1.8446744073709552e19},
		{name: "binary", src: "!!binary aGVsbG8=", want: "hello"},
		{name: "custom tag keeps text", src: "!vault abc", want: "abc"},
		{name: "JSON", src: `{"a": [1, "2"]}`, want: map[string]any{"a": []any{1, "2"}}},
		{name: "merge list earlier wins", src: "x: &x {a: 1}\ny: &y {a: 2, b: 2}\nz: {<<: [*x, *y], c: 3}", want: map[string]any{
			"x": map[string]any{"a": 1}, "y": map[string]any{"a": 2, "b": 2}, "z": map[string]any{"a": 1, "b": 2, "c": 3},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeValue([]byte(tt.src), "f.yaml")
			if err != nil {
				t.Fatalf("DecodeValue: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v want %#v", got, tt.want)
			}
		})
	}
}
