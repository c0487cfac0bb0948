package trust

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Limits are the resource limits a scope puts on the plugin calls made for
// its resources, on top of the host's own (host.Limits). A zero field is
// not lowered: the enclosing scope's, in the end the host's, applies. The
// host uses, field by field, the lower of its limit and the caller's.
type Limits struct {
	MemoryBytes     int64         // memory_mb: linear memory of each module of an instance
	CallTimeout     time.Duration // call_timeout: wall time of one plugin call
	OutputBytes     int64         // output_bytes: a call's output document
	RequestBytes    int64         // request_bytes: one host-call request, and a file read
	ExecOutputBytes int64         // exec_output_bytes: kept output per stream of a command
	HostCalls       int64         // host_calls: host calls one plugin call may make
}

// LimitKeys are the keys of an apply resource's limits property, in the
// order documented.
var LimitKeys = []string{"memory_mb", "call_timeout", "output_bytes", "request_bytes", "exec_output_bytes", "host_calls"}

// Lower returns l lowered by o: for each field the smaller of the two set
// values, so a child scope can only ever tighten its parent's limits.
func (l Limits) Lower(o Limits) Limits {
	low := func(a, b int64) int64 {
		switch {
		case a == 0:
			return b
		case b == 0:
			return a
		}
		return min(a, b)
	}
	return Limits{
		MemoryBytes:     low(l.MemoryBytes, o.MemoryBytes),
		CallTimeout:     time.Duration(low(int64(l.CallTimeout), int64(o.CallTimeout))),
		OutputBytes:     low(l.OutputBytes, o.OutputBytes),
		RequestBytes:    low(l.RequestBytes, o.RequestBytes),
		ExecOutputBytes: low(l.ExecOutputBytes, o.ExecOutputBytes),
		HostCalls:       low(l.HostCalls, o.HostCalls),
	}
}

// IsZero reports whether no limit is lowered.
func (l Limits) IsZero() bool { return l == Limits{} }

// DecodeLimits reads an apply resource's limits property (a decoded YAML
// map). Sizes are positive integers of bytes or strings with a unit ("16MiB",
// "512KiB", "1GB"); memory_mb is a positive integer of MiB; call_timeout a
// Go duration ("1s", "2m30s"); host_calls a positive integer. Unknown keys
// and non-positive values are errors.
func DecodeLimits(v any) (Limits, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Limits{}, fmt.Errorf("limits must be a map of %s", strings.Join(LimitKeys, ", "))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var l Limits
	for _, k := range keys {
		v := m[k]
		var err error
		switch k {
		case "memory_mb":
			var n int64
			if n, err = count(v); err == nil {
				if n > 4096 {
					err = fmt.Errorf("%d MiB is above the wasm32 maximum of 4096", n)
				}
				l.MemoryBytes = n << 20
			}
		case "call_timeout":
			l.CallTimeout, err = duration(v)
		case "output_bytes":
			l.OutputBytes, err = size(v)
		case "request_bytes":
			l.RequestBytes, err = size(v)
		case "exec_output_bytes":
			l.ExecOutputBytes, err = size(v)
		case "host_calls":
			l.HostCalls, err = count(v)
		default:
			err = fmt.Errorf("unknown limit; use %s", strings.Join(LimitKeys, ", "))
		}
		if err != nil {
			return Limits{}, fmt.Errorf("limits.%s: %w", k, err)
		}
	}
	return l, nil
}

// count reads a positive integer.
func count(v any) (int64, error) {
	switch n := v.(type) {
	case int:
		if n > 0 {
			return int64(n), nil
		}
	case int64:
		if n > 0 {
			return n, nil
		}
	case float64:
		if n > 0 && n == math.Trunc(n) && n < math.MaxInt64/2 {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf("must be a positive integer, got %v", v)
}

func duration(v any) (time.Duration, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("must be a duration such as \"30s\" or \"2m\", got %v", v)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as \"30s\" or \"2m\"", s)
	}
	return d, nil
}

var sizeUnits = map[string]int64{
	"": 1, "B": 1,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
	"KB": 1e3, "MB": 1e6, "GB": 1e9,
}

// size reads a byte count: an integer, or a string such as "16MiB".
func size(v any) (int64, error) {
	s, ok := v.(string)
	if !ok {
		return count(v)
	}
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(s)
	}
	num, unit := s[:i], strings.TrimSpace(s[i:])
	mult, known := sizeUnits[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !known || err != nil || n <= 0 || n > math.MaxInt64/mult {
		units := make([]string, 0, len(sizeUnits))
		for u := range sizeUnits {
			if u != "" {
				units = append(units, u)
			}
		}
		slices.Sort(units)
		return 0, fmt.Errorf("%q is not a positive size: write bytes, or a number with one of %s (\"16MiB\")", s, strings.Join(units, ", "))
	}
	return n * mult, nil
}
