package data

import (
	"strings"
	"testing"
)

func TestValidators(t *testing.T) {
	type call struct {
		in   string
		want bool
	}
	tests := []struct {
		name  string
		fn    func(string) bool
		cases []call
	}{
		{name: "IsIP", fn: IsIP, cases: []call{
			{"192.168.1.1", true}, {"::1", true}, {"fe80::1%eth0", true}, {"::ffff:1.2.3.4", true},
			{"", false}, {"localhost", false}, {"1.2.3", false}, {"256.1.1.1", false}, {"010.1.1.1", false}, {" 1.1.1.1", false}, {"1.1.1.1/24", false},
		}},
		{name: "IsIPv4", fn: IsIPv4, cases: []call{
			{"10.0.0.1", true}, {"0.0.0.0", true}, {"::1", false}, {"::ffff:1.2.3.4", false}, {"10.0.0", false}, {"", false},
		}},
		{name: "IsIPv6", fn: IsIPv6, cases: []call{
			{"::1", true}, {"2001:db8::1", true}, {"::ffff:1.2.3.4", true}, {"10.0.0.1", false}, {"2001:db8:::1", false}, {"", false},
		}},
		{name: "IsInt", fn: IsInt, cases: []call{
			{"0", true}, {"-42", true}, {"+7", true}, {"9223372036854775807", true},
			{"9223372036854775808", false}, {"1.0", false}, {"1_000", false}, {"0x10", false}, {" 1", false}, {"", false}, {"abc", false},
		}},
		{name: "IsFloat", fn: IsFloat, cases: []call{
			{"1", true}, {"-2.5", true}, {"1e3", true}, {".5", true},
			{"NaN", false}, {"Inf", false}, {"-inf", false}, {"0x1p-2", false}, {"1_0.0", false}, {"1e999", false}, {"", false}, {"1.2.3", false},
		}},
		{name: "IsDuration", fn: IsDuration, cases: []call{
			{"30s", true}, {"1m30s", true}, {"250ms", true}, {"1d", true}, {"2w", true}, {"1d12h", true}, {"0", true},
			{"10", false}, {"1y", false}, {"", false}, {"s", false}, {"1 d", false},
		}},
		{name: "IsShellSafe", fn: IsShellSafe, cases: []call{
			{"", true}, {"ok", true}, {"ok ok ok", true}, {"/usr/bin/x --flag=1", true}, {"it's \"quoted\" *.txt {a,b}", true},
			{"a;b", false}, {"a|b", false}, {"a&b", false}, {"a&&b", false}, {"$(id)", false}, {"${HOME}", false}, {"`id`", false},
			{"a>b", false}, {"a<b", false}, {"(a)", false}, {"a\nb", false}, {"a\rb", false}, {"a\x00b", false},
		}},
		{name: "IsHostname", fn: IsHostname, cases: []call{
			{"web01", true}, {"web-01.example.com", true}, {"1host", true}, {"10.0.0.1", true}, {"A.B", true}, {strings.Repeat("a", 63), true},
			{"", false}, {"-web", false}, {"web-", false}, {"web_01", false}, {"a..b", false}, {"example.com.", false}, {"héllo", false},
			{strings.Repeat("a", 64), false}, {strings.Repeat("a.", 126) + "ab", false},
		}},
		{name: "IsFQDN", fn: IsFQDN, cases: []call{
			{"example.com", true}, {"example.com.", true}, {"a.b.c.d", true}, {"x.1a", true},
			{"localhost", false}, {"localhost.", false}, {"10.0.0.1", false}, {"", false}, {".", false}, {"a..com", false}, {"-a.com", false},
		}},
	}
	for _, tt := range tests {
		for _, c := range tt.cases {
			t.Run(tt.name+"/"+c.in, func(t *testing.T) {
				if got := tt.fn(c.in); got != c.want {
					t.Fatalf("%s(%q) = %v, want %v", tt.name, c.in, got, c.want)
				}
			})
		}
	}
}

func TestIsRegex(t *testing.T) {
	tests := []struct {
		name    string
		s, re   string
		want    bool
		wantErr bool
	}{
		{name: "anchored match", s: "hello123", re: "^[a-z]+[0-9]+$", want: true},
		{name: "anchored mismatch", s: "HELLO", re: "^[a-z]+$"},
		{name: "unanchored finds a substring", s: "xx42yy", re: "[0-9]+", want: true},
		{name: "bad regex is an error", s: "x", re: "[", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := IsRegex(tt.s, tt.re)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("IsRegex(%q, %q) = %v, %v; want %v, error %v", tt.s, tt.re, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
