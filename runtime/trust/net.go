package trust

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// The net grant's entries, as matched by matchNet:
//
//	*                                   anything
//	[METHOD ]scheme://host[:port]       an HTTP(S) request: scheme http or https;
//	                                    host exact, "*" (any) or "*.example.com"
//	                                    (any name below it); port a number or "*",
//	                                    absent = the scheme's (443, 80); METHOD
//	                                    (GET, HEAD, ...) absent = any
//	host[:port]                         any scheme and method to host (port absent
//	                                    = any); the form remote bundles use
//	nats, nats:obj/B, nats:kv/B         NATS (docs/remote.md)
//
// Targets are "METHOD scheme://host:port" (ccm_net_fetch, its redirects),
// "host:port" (a remote bundle over http(s)) or "nats:obj/B", "nats:kv/B".

// netEntry is a parsed scheme entry; empty method means any.
type netEntry struct {
	method, scheme, host, port string
}

// parseNetEntry parses "[METHOD ]scheme://host[:port]". ok is false for an
// entry without "://" (the older forms).
func parseNetEntry(e string) (netEntry, bool, error) {
	if !strings.Contains(e, "://") {
		return netEntry{}, false, nil
	}
	var n netEntry
	rest := e
	if m, r, found := strings.Cut(e, " "); found {
		if m == "" || strings.ToUpper(m) != m || strings.ContainsFunc(m, func(r rune) bool { return r < 'A' || r > 'Z' }) {
			return n, true, fmt.Errorf("net entry %q: the method %q is not an upper-case HTTP method", e, m)
		}
		n.method, rest = m, r
	}
	anyPort := false
	if r, ok := strings.CutSuffix(strings.TrimSuffix(rest, "/"), ":*"); ok {
		rest, anyPort = r, true // url.Parse takes only a numeric port
	}
	u, err := url.Parse(rest)
	if err != nil {
		return n, true, fmt.Errorf("net entry %q: %v", e, err)
	}
	n.scheme = u.Scheme
	if n.scheme != "http" && n.scheme != "https" {
		return n, true, fmt.Errorf("net entry %q: scheme %q is not http or https", e, u.Scheme)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return n, true, fmt.Errorf("net entry %q: only [METHOD ]scheme://host[:port] is granted (no user, path or query)", e)
	}
	n.host = strings.ToLower(u.Hostname())
	if n.host == "" {
		return n, true, fmt.Errorf("net entry %q has no host", e)
	}
	if h := strings.TrimPrefix(n.host, "*."); strings.Contains(h, "*") && n.host != "*" {
		return n, true, fmt.Errorf("net entry %q: a wildcard host is \"*\" or \"*.domain\"", e)
	}
	n.port = u.Port()
	if anyPort {
		if n.port != "" {
			return n, true, fmt.Errorf("net entry %q has two ports", e)
		}
		n.port = "*"
	}
	if n.port == "" {
		n.port = defaultPort(n.scheme)
	}
	if n.port != "*" {
		if p, err := strconv.Atoi(n.port); err != nil || p < 1 || p > 65535 {
			return n, true, fmt.Errorf("net entry %q: port %q is not 1-65535 or \"*\"", e, n.port)
		}
	}
	return n, true, nil
}

func defaultPort(scheme string) string {
	if scheme == "http" {
		return "80"
	}
	return "443"
}

// checkNetEntry reports a malformed net entry (DecodeGrant).
func checkNetEntry(e string) error {
	if _, ok, err := parseNetEntry(e); ok || err != nil {
		return err
	}
	if e == "" || strings.ContainsAny(e, " \t/") && !strings.HasPrefix(e, "nats:") {
		return fmt.Errorf("net entry %q is not \"*\", [METHOD ]scheme://host[:port], host[:port] or a nats target", e)
	}
	return nil
}

// NetTarget is the target the net grant must allow for an HTTP(S) request:
// "METHOD scheme://host:port", the port always written.
func NetTarget(method string, u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	return method + " " + u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// matchNet matches a target (see above) against a grant's entries.
func matchNet(entries []string, target string) bool {
	var t netEntry
	method, rest, _ := strings.Cut(target, " ")
	if scheme, hp, ok := strings.Cut(rest, "://"); ok {
		t.method, t.scheme = method, scheme
		host, port, err := net.SplitHostPort(hp)
		if err != nil {
			return false
		}
		t.host, t.port = strings.ToLower(host), port
	} else if h, p, err := net.SplitHostPort(target); err == nil && !strings.HasPrefix(target, "nats:") {
		t.host, t.port = strings.ToLower(h), p // a remote bundle's host:port
	}
	for _, e := range entries {
		if e == "*" {
			return true
		}
		n, ok, err := parseNetEntry(e)
		switch {
		case err != nil:
			continue
		case ok:
			if t.host == "" || (t.scheme != "" && n.scheme != t.scheme) || (n.method != "" && t.method != "" && n.method != t.method) {
				continue
			}
			if hostMatches(n.host, t.host) && (n.port == "*" || n.port == t.port) {
				return true
			}
		case t.host != "":
			// host[:port]: any scheme and method.
			eh, ep, err := net.SplitHostPort(e)
			if err != nil {
				eh, ep = strings.Trim(e, "[]"), ""
			}
			if hostMatches(strings.ToLower(eh), t.host) && (ep == "" || ep == "*" || ep == t.port) {
				return true
			}
		default:
			// NATS targets, matched as written: "nats" allows every bucket.
			host := target
			if i := strings.LastIndexByte(target, ':'); i >= 0 {
				host = target[:i]
			}
			if e == target || e == host {
				return true
			}
		}
	}
	return false
}

// hostMatches matches a host against "*", "*.domain" or a name.
func hostMatches(pattern, host string) bool {
	if pattern == "*" {
		return true
	}
	if d, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+d)
	}
	return pattern == host
}
