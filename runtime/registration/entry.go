// Package registration is CCM's service registration over NATS
// (docs/registration.md): entries announced by stable resources
// (register_when_stable) or by `ccm registration create`, kept in a
// JetStream stream that behaves as a key-value store keyed by the entry's
// subject, read back by `ccm registration query|watch` and by templates'
// registrations().
//
// The subjects, stream configuration, message headers and JSON entry format
// are CCM's, so that CCM and ccm nodes share one registry. What differs
// (docs/decisions.md, "Registration"): `init` creates the stream with
// AllowDirect; lookups use a batched direct get when the stream allows it
// and fall back to a short-lived ordered consumer when it does not (CCM's
// own stream) or when more than the server's 1024 subjects match; lookups
// are bounded in entries and bytes.
package registration

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("registration is invalid")

var (
	validName      = regexp.MustCompile(`^[a-zA-Z][a-zA-Z\d_-]*$`)
	validPromLabel = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// Entry is one registration, CCM's RegistrationEntry. The field names are
// what templates see (entry.Address, entry.Port, ...); the JSON names are
// CCM's wire format.
type Entry struct {
	Cluster  string
	Service  string
	Protocol string
	Address  string
	// Port is 0 when the entry has none (JSON null, as CCM writes it).
	Port        int64
	Priority    int64
	Annotations map[string]string
	// TTL is "" (the stream's max age applies), "never", or a Go duration
	// such as "10m0s"; it becomes the message's Nats-TTL header.
	TTL string
}

// wire is Entry in CCM's JSON form.
type wire struct {
	Cluster     string            `json:"cluster"`
	Service     string            `json:"service"`
	Protocol    string            `json:"protocol"`
	Address     string            `json:"address"`
	Port        *int64            `json:"port"`
	Priority    int64             `json:"priority"`
	Annotations map[string]string `json:"annotations,omitempty"`
	TTL         json.RawMessage   `json:"ttl,omitempty"`
}

// MarshalJSON writes CCM's format: port null when unset, ttl omitted when
// unset.
func (e Entry) MarshalJSON() ([]byte, error) {
	w := wire{Cluster: e.Cluster, Service: e.Service, Protocol: e.Protocol, Address: e.Address, Priority: e.Priority, Annotations: e.Annotations}
	if e.Port != 0 {
		p := e.Port
		w.Port = &p
	}
	if e.TTL != "" {
		w.TTL, _ = json.Marshal(e.TTL)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads CCM's format; a numeric ttl is nanoseconds (CCM's
// backward compatibility with time.Duration).
func (e *Entry) UnmarshalJSON(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Entry{Cluster: w.Cluster, Service: w.Service, Protocol: w.Protocol, Address: w.Address, Priority: w.Priority, Annotations: w.Annotations}
	if w.Port != nil {
		e.Port = *w.Port
	}
	raw := strings.TrimSpace(string(w.TTL))
	switch {
	case raw == "" || raw == "null":
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(w.TTL, &s); err != nil {
			return err
		}
		ttl, err := ParseTTL(s)
		if err != nil {
			return err
		}
		e.TTL = ttl
	default:
		var ns float64
		if err := json.Unmarshal(w.TTL, &ns); err != nil {
			return fmt.Errorf("ttl: %w", err)
		}
		if ns > 0 {
			e.TTL = time.Duration(ns).String()
		}
	}
	return nil
}

// ParseTTL normalises a TTL: "never", or a duration as CCM accepts it (Go
// units plus d, w and y), returned as a Go duration string. "" stays "".
func ParseTTL(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "":
		return "", nil
	case "never":
		return "never", nil
	}
	d, err := ParseDuration(s)
	if err != nil {
		return "", fmt.Errorf("%w: ttl %q: want a duration such as 30s, 10m, 1h or 2d, or never", ErrInvalid, s)
	}
	if d < time.Second {
		return "", fmt.Errorf("%w: ttl %q: NATS message TTLs are at least 1s", ErrInvalid, s)
	}
	return d.String(), nil
}

var durationPart = regexp.MustCompile(`(\d+(?:\.\d+)?)(y|w|d|h|ms|m|s|us|µs|ns)`)

// ParseDuration is time.ParseDuration plus the units d (24h), w (7d) and y
// (365d), as CCM's fisk.ParseDuration.
func ParseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	parts := durationPart.FindAllStringSubmatchIndex(s, -1)
	if len(parts) == 0 {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	var total time.Duration
	next := 0
	for _, p := range parts {
		if p[0] != next {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		next = p[1]
		v, err := strconv.ParseFloat(s[p[2]:p[3]], 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		unit := map[string]time.Duration{"y": 365 * 24 * time.Hour, "w": 7 * 24 * time.Hour, "d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second, "ms": time.Millisecond, "us": time.Microsecond, "µs": time.Microsecond, "ns": 1}[s[p[4]:p[5]]]
		total += time.Duration(v * float64(unit))
	}
	if next != len(s) {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return total, nil
}

// Validate applies CCM's rules: cluster, service and protocol are names
// ([a-zA-Z][a-zA-Z0-9_-]*), address is an IP address, port (when set)
// 1-65535, priority 1-255.
func (e *Entry) Validate() error {
	for _, f := range []struct{ name, v string }{{"cluster", e.Cluster}, {"protocol", e.Protocol}, {"service", e.Service}} {
		if f.v == "" {
			return fmt.Errorf("%w: %s is required", ErrInvalid, f.name)
		}
		if !validName.MatchString(f.v) {
			return fmt.Errorf("%w: %s %q is not a valid name: letters, digits, '_' and '-', starting with a letter", ErrInvalid, f.name, f.v)
		}
	}
	if e.Address == "" {
		return fmt.Errorf("%w: address is required", ErrInvalid)
	}
	if net.ParseIP(e.Address) == nil {
		return fmt.Errorf("%w: address %q is not an IP address (CCM registers IP addresses only)", ErrInvalid, e.Address)
	}
	if e.Port < 0 || e.Port > math.MaxUint16 {
		return fmt.Errorf("%w: port '%d' must be between 1 and %d", ErrInvalid, e.Port, math.MaxUint16)
	}
	if e.Priority <= 0 || e.Priority > math.MaxUint8 {
		return fmt.Errorf("%w: priority '%d' must be between 1 and 255", ErrInvalid, e.Priority)
	}
	if _, err := ParseTTL(e.TTL); err != nil {
		return err
	}
	return nil
}

// InstanceID is CCM's: FNV-1a 64 over cluster, service, protocol, address
// and the port as Go's %d prints CCM's `any` port, hex encoded. An entry
// without a port hashes what %d prints for nil, as CCM does, so both tools
// name the same subject.
func (e *Entry) InstanceID() string {
	h := fnv.New64a()
	h.Write([]byte(e.Cluster))
	h.Write([]byte(e.Service))
	h.Write([]byte(e.Protocol))
	h.Write([]byte(e.Address))
	if e.Port == 0 {
		h.Write([]byte("%!d(<nil>)"))
	} else {
		h.Write([]byte(strconv.FormatInt(e.Port, 10)))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Entries is a lookup's result; templates call its PrometheusFileSD.
type Entries []*Entry

type targetGroup struct {
	Labels  map[string]string `json:"labels"`
	Targets []string          `json:"targets"`
}

// PrometheusFileSD renders the entries as Prometheus file_sd JSON, CCM's
// rules: grouped by cluster, service and protocol in first-seen order;
// entries without a port skipped; entries whose service or protocol is
// "prometheus" included unless annotation prometheus.io/scrape is set to
// other than "true", others only when it is "true"; labels cluster,
// service, protocol and the first entry's annotations that are valid
// label names, not __-prefixed and not empty.
func (entries Entries) PrometheusFileSD() (string, error) {
	type key struct{ cluster, service, protocol string }
	groups := map[key]*targetGroup{}
	var order []key
	for _, e := range entries {
		if e.Port == 0 {
			continue
		}
		scrape, set := e.Annotations["prometheus.io/scrape"]
		if e.Service == "prometheus" || e.Protocol == "prometheus" {
			if set && scrape != "true" {
				continue
			}
		} else if !set || scrape != "true" {
			continue
		}
		k := key{e.Cluster, e.Service, e.Protocol}
		g, ok := groups[k]
		if !ok {
			labels := map[string]string{"cluster": e.Cluster, "service": e.Service, "protocol": e.Protocol}
			for ak, av := range e.Annotations {
				if av == "" || strings.HasPrefix(ak, "__") || !validPromLabel.MatchString(ak) {
					continue
				}
				labels[ak] = av
			}
			g = &targetGroup{Labels: labels}
			groups[k] = g
			order = append(order, k)
		}
		g.Targets = append(g.Targets, net.JoinHostPort(e.Address, strconv.FormatInt(e.Port, 10)))
	}
	out := make([]targetGroup, 0, len(order))
	for _, k := range order {
		out = append(out, *groups[k])
	}
	j, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return "", fmt.Errorf("could not marshal prometheus file SD: %w", err)
	}
	return string(j), nil
}

// FromMap builds an entry from a register_when_stable item, its templates
// expanded: strings for cluster, service, protocol and address; whole
// numbers (or their text) for port and priority; a duration or never for
// ttl; annotations a map whose values are printed as text.
func FromMap(m map[string]any) (*Entry, error) {
	e := &Entry{}
	str := func(k string) (string, error) {
		switch v := m[k].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		default:
			return "", fmt.Errorf("%w: %s must be a string, not %T", ErrInvalid, k, v)
		}
	}
	num := func(k string) (int64, error) {
		switch v := m[k].(type) {
		case nil:
			return 0, nil
		case int:
			return int64(v), nil
		case int64:
			return v, nil
		case uint64:
			if v > math.MaxInt64 {
				return 0, fmt.Errorf("%w: %s %d is too large", ErrInvalid, k, v)
			}
			return int64(v), nil
		case float64:
			if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
				return 0, fmt.Errorf("%w: %s must be a whole number, not %v", ErrInvalid, k, v)
			}
			return int64(v), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w: %s must be a whole number, not %q", ErrInvalid, k, v)
			}
			return n, nil
		default:
			return 0, fmt.Errorf("%w: %s must be a whole number, not %T", ErrInvalid, k, v)
		}
	}
	var err error
	for k, dst := range map[string]*string{"cluster": &e.Cluster, "service": &e.Service, "protocol": &e.Protocol, "address": &e.Address} {
		if *dst, err = str(k); err != nil {
			return nil, err
		}
	}
	if e.Port, err = num("port"); err != nil {
		return nil, err
	}
	if _, ok := m["port"]; ok && e.Port == 0 {
		return nil, fmt.Errorf("%w: port '0' must be between 1 and %d", ErrInvalid, math.MaxUint16)
	}
	if e.Priority, err = num("priority"); err != nil {
		return nil, err
	}
	switch v := m["ttl"].(type) {
	case nil:
	case string:
		if e.TTL, err = ParseTTL(v); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: ttl must be a duration such as 10m or never, not %T", ErrInvalid, v)
	}
	switch v := m["annotations"].(type) {
	case nil:
	case map[string]any:
		e.Annotations = make(map[string]string, len(v))
		for k, a := range v {
			if a == nil {
				a = ""
			}
			e.Annotations[k] = fmt.Sprint(a)
		}
	default:
		return nil, fmt.Errorf("%w: annotations must be a map of names to text, not %T", ErrInvalid, v)
	}
	return e, nil
}
