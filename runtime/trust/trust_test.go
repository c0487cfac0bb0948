package trust

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

func TestChainAllows(t *testing.T) {
	vendor := Grant{
		FSRead:  []string{"/etc/**", "/opt/vendor/**"},
		FSWrite: []string{"/opt/vendor/**"},
		Exec:    []string{"/usr/bin/systemctl"},
		Net:     []string{"downloads.example.com:443", "mirror.example.com"},
	}
	tests := []struct {
		name   string
		chain  Chain
		kind   Kind
		target string
		want   bool
	}{
		{"empty chain allows everything", nil, FSWrite, "/etc/shadow", true},
		{"all allows a write", Chain{All()}, FSWrite, "/etc/shadow", true},
		{"all allows users", Chain{All()}, Users, "", true},
		{"read inside", Chain{vendor}, FSRead, "/etc/hosts", true},
		{"glob covers its own directory", Chain{vendor}, FSWrite, "/opt/vendor", true},
		{"write outside", Chain{vendor}, FSWrite, "/etc/hosts", false},
		{"sibling prefix is not inside", Chain{vendor}, FSWrite, "/opt/vendor-evil/x", false},
		{"dot-dot is refused even if it would match", Chain{vendor}, FSWrite, "/opt/vendor/../../etc/passwd", false},
		{"relative path is refused", Chain{vendor}, FSRead, "etc/hosts", false},
		{"trailing slash is unclean", Chain{vendor}, FSRead, "/etc/", false},
		{"exec exact", Chain{vendor}, Exec, "/usr/bin/systemctl", true},
		{"exec other", Chain{vendor}, Exec, "/bin/sh", false},
		{"net host and port", Chain{vendor}, Net, "downloads.example.com:443", true},
		{"net other port", Chain{vendor}, Net, "downloads.example.com:80", false},
		{"net host entry covers any port", Chain{vendor}, Net, "mirror.example.com:8080", true},
		{"users not granted", Chain{vendor}, Users, "", false},
		{"narrowing intersects", Chain{All(), vendor}, FSWrite, "/etc/hosts", false},
		{"narrowing keeps what both allow", Chain{All(), vendor}, FSWrite, "/opt/vendor/x", true},
		{"a child cannot widen", Chain{vendor, All()}, FSWrite, "/etc/hosts", false},
		{"unknown kind", Chain{All()}, Kind("bogus"), "/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.chain.Allows(tt.kind, tt.target); got != tt.want {
				t.Fatalf("Allows(%s, %q) = %v, want %v", tt.kind, tt.target, got, tt.want)
			}
		})
	}
}

func TestNarrowDoesNotAlias(t *testing.T) {
	base := make(Chain, 1, 4)
	base[0] = All()
	a := base.Narrow(Grant{FSRead: []string{"/a/**"}})
	b := base.Narrow(Grant{FSRead: []string{"/b/**"}})
	if !a.Allows(FSRead, "/a/x") || a.Allows(FSRead, "/b/x") {
		t.Fatalf("chain a was changed by narrowing its parent again: %+v", a)
	}
	if !b.Allows(FSRead, "/b/x") || len(base) != 1 {
		t.Fatalf("b = %+v, base = %+v", b, base)
	}
}

func TestModeReadOnly(t *testing.T) {
	for m, want := range map[Mode]bool{ModeApply: false, ModeNoop: true, ModeHealthCheck: true, ModeStatus: true} {
		if m.ReadOnly() != want {
			t.Errorf("%s.ReadOnly() = %v", m, !want)
		}
	}
}

func FuzzMatchPath(f *testing.F) {
	for _, s := range []string{"/etc/passwd", "/opt/vendor/../x", "/opt/vendor", "", "//x", "/a/**"} {
		f.Add(s)
	}
	g := Grant{FSWrite: []string{"/opt/vendor/**"}}
	f.Fuzz(func(t *testing.T, target string) {
		if GrantAllows(g, FSWrite, target) {
			// Anything allowed must be clean, absolute and inside the grant.
			if target != "/opt/vendor" && (len(target) < len("/opt/vendor/") || target[:len("/opt/vendor/")] != "/opt/vendor/") {
				t.Fatalf("%q allowed outside /opt/vendor", target)
			}
		}
	})
}

func TestParseGrant(t *testing.T) {
	tests := []struct {
		name, src, err string
		check          func(Grant) bool
	}{
		{"yaml", "fs_read: [\"/etc/**\"]\nexec: [/usr/bin/systemctl]\nusers: true\n", "", func(g Grant) bool {
			return len(g.FSRead) == 1 && g.Exec[0] == "/usr/bin/systemctl" && g.Users
		}},
		{"json", `{"fs_write": ["/opt/x/**"]}`, "", func(g Grant) bool { return g.FSWrite[0] == "/opt/x/**" }},
		{"empty grants nothing", "", "", func(g Grant) bool { return !g.Users && g.FSRead == nil }},
		{"unknown key", "fs_wrte: [/x]\n", "unknown field", nil},
		{"relative glob", "fs_read: [etc/**]\n", "not an absolute", nil},
		{"probe_exec is a grant key: the operator vouches for a plugin's probe", "probe_exec: [/usr/bin/foo status]\n", "", func(g Grant) bool { return g.ProbeExec[0] == "/usr/bin/foo status" }},
		{"relative probe_exec", "probe_exec: [foo status]\n", "not an absolute program", nil},
		{"env", "env: [LD_PRELOAD=/opt/x.so, FOO, \"*\"]\n", "", func(g Grant) bool { return len(g.Env) == 3 }},
		{"env without a name", "env: [\"=x\"]\n", "is not NAME", nil},
		{"not a map", "- /etc\n", "grant", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseGrant([]byte(tt.src))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !tt.check(g) {
				t.Fatalf("ParseGrant = %+v, %v", g, err)
			}
		})
	}
}

// TestDecodeGrantIn: relative path globs in an apply's grants are taken from
// the manifest's directory, whose own glob characters match only
// themselves; absolute ones are kept, and the whole chain check then works
// on them as on any other.
func TestDecodeGrantIn(t *testing.T) {
	g, err := DecodeGrantIn(map[string]any{
		"fs_read":  []any{"vendor/plugins/*.wasm", "/etc/hosts", "../shared/**"},
		"fs_write": []any{"."},
		"exec":     []any{"bin/tool"},
	}, "/srv/site [1]/ops")
	if err != nil {
		t.Fatal(err)
	}
	want := Grant{
		FSRead:  []string{`/srv/site \[1\]/ops/vendor/plugins/*.wasm`, "/etc/hosts", `/srv/site \[1\]/shared/**`},
		FSWrite: []string{`/srv/site \[1\]/ops`},
		Exec:    []string{`/srv/site \[1\]/ops/bin/tool`},
	}
	if !reflect.DeepEqual(g, want) {
		t.Fatalf("got  %#v\nwant %#v", g, want)
	}
	c := Chain{g}
	for target, ok := range map[string]bool{
		"/srv/site [1]/ops/vendor/plugins/motd.wasm": true,
		"/srv/site 1/ops/vendor/plugins/motd.wasm":   false, // [1] is not a class
		"/srv/site [1]/ops/vendor/plugins/motd.so":   false,
		"/srv/site [1]/shared/a/b":                   true,
	} {
		if c.Allows(FSRead, target) != ok {
			t.Errorf("Allows(fs_read, %q) = %v, want %v", target, !ok, ok)
		}
	}
	if _, err := DecodeGrantIn(map[string]any{"fs_read": []any{""}}, "/srv"); err == nil {
		t.Error("an empty entry was accepted")
	}
	if _, err := DecodeGrant(map[string]any{"fs_read": []any{"vendor/**"}}); err == nil || !strings.Contains(err.Error(), "not an absolute") {
		t.Errorf("DecodeGrant with a relative glob: %v", err)
	}
}

// TestModeRequest: the request flags a plugin reads follow from the mode
// alone, whatever the request said before.
func TestModeRequest(t *testing.T) {
	for _, tt := range []struct {
		mode         Mode
		noop, health bool
	}{
		{ModeApply, false, false},
		{ModeNoop, true, false},
		{ModeHealthCheck, false, true},
		{ModeStatus, true, false},
	} {
		for _, in := range []abi.Request{{}, {Noop: true, HealthCheckOnly: true}} {
			in.Name = "n"
			got := tt.mode.Request(in)
			if got.Noop != tt.noop || got.HealthCheckOnly != tt.health || got.Name != "n" {
				t.Errorf("%s.Request(%+v) = %+v", tt.mode, in, got)
			}
		}
	}
}
