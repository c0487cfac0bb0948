package trust

import (
	"net/url"
	"strings"
	"testing"
)

func TestMatchNet(t *testing.T) {
	rows := []struct {
		entry, target string
		want          bool
	}{
		{"*", "GET https://a.example:443", true},
		{"https://a.example", "GET https://a.example:443", true},
		{"https://a.example", "GET https://a.example:8443", false},
		{"https://a.example", "GET http://a.example:443", false},
		{"https://a.example:8443", "GET https://a.example:8443", true},
		{"https://a.example:*", "GET https://a.example:8443", true},
		{"http://a.example", "GET http://a.example:80", true},
		{"GET https://a.example", "GET https://a.example:443", true},
		{"HEAD https://a.example", "GET https://a.example:443", false},
		{"GET https://*.example.com", "GET https://dl.example.com:443", true},
		{"GET https://*.example.com", "GET https://example.com:443", false},
		{"GET https://*.example.com", "GET https://evil-example.com:443", false},
		{"https://*:*", "GET https://127.0.0.1:39000", true},
		{"https://A.Example", "GET https://a.example:443", true},
		{"https://[::1]:8443", "GET https://[::1]:8443", true},
		// the older forms: any scheme and method
		{"a.example", "GET https://a.example:443", true},
		{"a.example:443", "GET https://a.example:443", true},
		{"a.example:443", "GET http://a.example:80", false},
		{"a.example", "GET https://b.example:443", false},
		// a remote bundle's host:port target
		{"a.example:443", "a.example:443", true},
		{"a.example", "a.example:443", true},
		{"https://a.example", "a.example:443", true},
		{"GET https://a.example", "a.example:443", true},
		{"https://a.example", "a.example:8443", false},
		// NATS targets
		{"nats", "nats:obj/B", true},
		{"nats:obj/B", "nats:obj/B", true},
		{"nats:obj/B", "nats:kv/B", false},
		{"https://nats", "nats:obj/B", false},
		{"nats", "GET https://nats:443", true},
		// malformed entries match nothing
		{"get https://a.example", "GET https://a.example:443", false},
		{"ftp://a.example", "GET ftp://a.example:21", false},
		{"https://a.example/path", "GET https://a.example:443", false},
	}
	for _, r := range rows {
		if got := matchNet([]string{r.entry}, r.target); got != r.want {
			t.Errorf("matchNet(%q, %q) = %v, want %v", r.entry, r.target, got, r.want)
		}
	}
}

func TestCheckNetEntry(t *testing.T) {
	for _, ok := range []string{"*", "nats", "nats:obj/B", "a.example", "a.example:443", "https://a.example", "GET https://*.a.example:*", "http://[::1]:80"} {
		if err := checkNetEntry(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "get https://a", "ftp://a", "https://", "https://a/x", "https://u@a", "https://a:99999", "https://a*b.example", "a b", "https://a:1:*"} {
		if err := checkNetEntry(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ParseGrant([]byte(`net: ["ftp://x"]`)); err == nil {
		t.Error("ParseGrant accepted an ftp entry")
	}
}

func TestNetTarget(t *testing.T) {
	for in, want := range map[string]string{
		"https://A.example/x?y": "GET https://a.example:443",
		"http://a.example:8080": "GET http://a.example:8080",
		"https://[::1]/":        "GET https://[::1]:443",
	} {
		u, _ := url.Parse(in)
		if got := NetTarget("GET", u); got != want {
			t.Errorf("NetTarget(%s) = %q, want %q", in, got, want)
		}
	}
}

// FuzzMatchNet: no entry or target panics the matcher, and an entry that
// names a scheme host never matches a request to another host.
func FuzzMatchNet(f *testing.F) {
	f.Add("GET https://*.example.com:*", "GET https://a.example.com:443")
	f.Add("a.example:443", "a.example:443")
	f.Add("nats", "nats:obj/B")
	f.Add("https://[::1]:8443", "GET https://[::1]:8443")
	f.Fuzz(func(t *testing.T, entry, target string) {
		_ = checkNetEntry(entry)
		ok := matchNet([]string{entry}, target)
		n, scheme, err := parseNetEntry(entry)
		if !ok || !scheme || err != nil || n.host == "*" || strings.HasPrefix(n.host, "*.") {
			return
		}
		u, perr := url.Parse(strings.TrimPrefix(target, "GET "))
		if perr == nil && u.Scheme != "" && strings.ToLower(u.Hostname()) != n.host {
			t.Fatalf("%q matched %q, another host", entry, target)
		}
	})
}
