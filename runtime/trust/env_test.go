package trust

import (
	"strings"
	"testing"
)

func TestEnvAllowed(t *testing.T) {
	vendor := Chain{{Env: []string{"FOO", "LD_PRELOAD=/opt/v/lib.so", "*"}}}
	tests := []struct {
		chain Chain
		kv    string
		want  string // "" allowed, else a part of the refusal
	}{
		{nil, "PATH=/usr/bin:/bin", ""},
		{nil, "LANG=C", ""},
		{nil, "LC_ALL=en_US.UTF-8", ""},
		{nil, "DEBIAN_FRONTEND=noninteractive", ""},
		{nil, "SYSTEMD_PAGER=", ""},
		{nil, "FOO=bar", ""},
		{nil, "LD_PRELOAD=/tmp/x.so", "only with an env entry"},
		{nil, "ld_preload=/tmp/x.so", "only with an env entry"},
		{nil, "BASH_ENV=/tmp/x", "only with an env entry"},
		{nil, "BASH_FUNC_echo%%=() { id; }", "only with an env entry"},
		{nil, "PATH=/tmp/evil:/usr/bin", "only with an env entry"},
		{nil, "PATH=", "only with an env entry"},
		{nil, "LANG=/tmp/x", "only with an env entry"},
		{nil, "LC_ALL=../../tmp", "only with an env entry"},
		{nil, "PYTHONSTARTUP=/tmp/x.py", "only with an env entry"},
		{nil, "NODE_OPTIONS=--require /tmp/x.js", "only with an env entry"},
		{nil, "GCONV_PATH=/tmp", "only with an env entry"},
		{nil, "SYSTEMD_PAGER=/tmp/x", "only with an env entry"},
		{nil, "noequals", "not NAME=VALUE"},
		{nil, "=x", "not NAME=VALUE"},
		{Chain{All()}, "FOO=bar", ""},
		{Chain{All()}, "LD_PRELOAD=/tmp/x.so", "grant 1 of 1 has none"},
		{Chain{{}}, "FOO=bar", `add "FOO"`},
		{vendor, "FOO=anything", ""},
		{vendor, "BAR=1", ""},
		{vendor, "LD_PRELOAD=/opt/v/lib.so", ""},
		{vendor, "LD_PRELOAD=/tmp/x.so", "grant 1 of 1 has none"},
		{vendor, "LD_LIBRARY_PATH=/opt/v", "grant 1 of 1 has none"},
		{append(Chain{All()}, vendor...), "LD_PRELOAD=/opt/v/lib.so", "grant 1 of 2 has none"},
	}
	for _, tt := range tests {
		got := tt.chain.EnvAllowed(tt.kv)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%v.EnvAllowed(%q) = %q, want %q", tt.chain, tt.kv, got, tt.want)
		}
	}
}

// FuzzEnvAllowed: a code-injection variable never passes without an entry
// naming it in every grant, whatever its spelling or value; a free entry
// passes everywhere; "*" never covers the injection class.
func FuzzEnvAllowed(f *testing.F) {
	for _, s := range []string{"LD_PRELOAD=/x", "PATH=/usr/bin", "PATH=/usr/bin:/tmp", "LANG=C", "LC_CTYPE=C.UTF-8",
		"BASH_ENV=/x", "Ld_Audit=x", "FOO=bar", "PYTHONPATH=/x", "LANG=../x", "PATH=/usr/bin:", "x=y=z"} {
		f.Add(s)
	}
	star := Chain{{Env: []string{"*"}}}
	f.Fuzz(func(t *testing.T, kv string) {
		name, value, ok := strings.Cut(kv, "=")
		free := EnvFree(kv)
		if free {
			if name == "PATH" {
				for _, d := range strings.Split(value, ":") {
					if !strings.HasPrefix(d, "/") || strings.Contains(d, "..") || d == "/tmp" {
						t.Fatalf("free PATH %q has %q", kv, d)
					}
				}
			} else if strings.ContainsAny(value, "/") {
				t.Fatalf("free entry %q names a path", kv)
			}
			for _, c := range []Chain{nil, star, {{}}} {
				if r := c.EnvAllowed(kv); r != "" {
					t.Fatalf("free %q refused by %v: %s", kv, c, r)
				}
			}
			return
		}
		if !ok || name == "" || strings.Contains(name, "\x00") {
			if (Chain(nil)).EnvAllowed(kv) == "" {
				t.Fatalf("malformed %q allowed", kv)
			}
			return
		}
		if InjectsCode(kv) {
			for _, c := range []Chain{nil, star, {All()}, {{Env: []string{"*", strings.ToLower(name)}}}} {
				if strings.ToLower(name) == name && len(c) == 1 && len(c[0].Env) == 2 {
					continue // the lower-case spelling is then an exact entry
				}
				if r := c.EnvAllowed(kv); r == "" {
					t.Fatalf("injection variable %q allowed by %v", kv, c)
				}
			}
			if r := (Chain{{Env: []string{kv}}, {Env: []string{name}}}).EnvAllowed(kv); r != "" {
				t.Fatalf("%q refused with exact entries: %s", kv, r)
			}
			if r := (Chain{{Env: []string{name}}, {}}).EnvAllowed(kv); r == "" {
				t.Fatalf("%q allowed with an entry in only one grant of two", kv)
			}
			return
		}
		if r := star.EnvAllowed(kv); r != "" {
			t.Fatalf("%q refused by *: %s", kv, r)
		}
		if r := (Chain{{}}).EnvAllowed(kv); r == "" {
			t.Fatalf("%q allowed by an empty grant", kv)
		}
	})
}
