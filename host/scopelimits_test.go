package host

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestScopeLimitsApplyOnlyToTheirCaller runs the same probe plugin (one
// compiled module, an instance per scope) for a caller whose scope
// lowered a limit and for one that did not: the lowered limit stops only
// the first, with the limit named, and the second runs under the host's.
func TestScopeLimitsApplyOnlyToTheirCaller(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	big := filepath.Join(dir, "big")
	mustWrite(t, big, strings.Repeat("x", 4096), 0o644)
	grants := trust.Chain{trust.All()}
	h := newProbeHost(t, Limits{CallTimeout: time.Minute})
	calls := func(t *testing.T, c ...hc) map[string]any { return map[string]any{"calls": toAny(t, c)} }

	tests := []struct {
		name   string
		limits trust.Limits
		props  func(t *testing.T) map[string]any
		want   string // in the lowered caller's error; the other caller succeeds
	}{
		{
			name:   "call_timeout",
			limits: trust.Limits{CallTimeout: 300 * time.Millisecond},
			props: func(t *testing.T) map[string]any {
				return calls(t, hc{abi.CallExec, abi.ExecRequest{Argv: []string{"sleep", "0.8"}}})
			},
			want: "exceeded the call_timeout limit of 300ms",
		},
		{
			name:   "output_bytes",
			limits: trust.Limits{OutputBytes: 1024},
			props:  func(t *testing.T) map[string]any { return calls(t, hc{abi.CallFSRead, abi.FSReadRequest{Path: big}}) },
			want:   "output_bytes limit of 1024",
		},
		{
			name:   "memory_mb",
			limits: trust.Limits{MemoryBytes: 8 << 20},
			props:  func(*testing.T) map[string]any { return map[string]any{"alloc": 16 << 20} },
			want:   "exceeded the memory_mb limit of 8 MiB",
		},
		{
			name:   "host_calls",
			limits: trust.Limits{HostCalls: 2},
			props: func(t *testing.T) map[string]any {
				r := hc{abi.CallFSRead, abi.FSReadRequest{Path: big}}
				return calls(t, r, r, r)
			},
			want: "exceeded the host_calls limit of 2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lowered := trust.Caller{Resource: "probe#lowered", Grants: grants, Limits: tc.limits}
			start := time.Now()
			_, err := h.Apply(context.Background(), lowered, abi.Request{Type: "probe", Name: "lowered", Properties: tc.props(t)})
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("lowered caller: err = %v, want ErrLimit with %q", err, tc.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("the lowered limit took %v to stop the call", took)
			}
			other := trust.Caller{Resource: "probe#other", Grants: grants}
			res, err := h.Apply(context.Background(), other, abi.Request{Type: "probe", Name: "other", Properties: tc.props(t)})
			if err != nil || res.Error != "" {
				t.Fatalf("caller without lowered limits: %+v, %v", res, err)
			}
		})
	}
}

// TestScopeLimitsSizes checks request_bytes and exec_output_bytes lowered
// for one caller only.
func TestScopeLimitsSizes(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	h := newProbeHost(t, Limits{})
	grants := trust.Chain{trust.All()}
	lowered := trust.Caller{Grants: grants, Limits: trust.Limits{RequestBytes: 2048, ExecOutputBytes: 100}}
	open := trust.Caller{Grants: grants}
	write := hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, "w"), Content: make([]byte, 4096), Mode: 0o644}}
	exec := hc{abi.CallExec, abi.ExecRequest{Argv: []string{"head", "-c", "1000", "/dev/zero"}}}

	r := apply(t, h, lowered, write, exec)
	wantCode(t, r[0], abi.CodeTooLarge, "exceeds the request_bytes limit of 2048")
	var out abi.ExecResponse
	okInto(t, r[1], &out)
	if !out.Truncated || len(out.Stdout) > 100 {
		t.Fatalf("lowered exec_output_bytes: truncated %v, %d bytes kept", out.Truncated, len(out.Stdout))
	}

	r = apply(t, h, open, write, exec)
	okInto(t, r[0], nil)
	out = abi.ExecResponse{}
	okInto(t, r[1], &out)
	if out.Truncated || len(out.Stdout) != 1000 {
		t.Fatalf("host limits: truncated %v, %d bytes kept", out.Truncated, len(out.Stdout))
	}
}

// TestScopeMemoryReplacesBigInstance checks that an instance grown large
// under the host's limit is replaced, not failed, when a caller with a
// lower memory cap comes next.
func TestScopeMemoryReplacesBigInstance(t *testing.T) {
	t.Parallel()
	h := newProbeHost(t, Limits{})
	if _, err := h.Apply(context.Background(), trust.Caller{}, abi.Request{Type: "probe", Name: "big", Properties: map[string]any{"alloc": 24 << 20}}); err != nil {
		t.Fatal(err)
	}
	before := instanceOf(h)
	small := trust.Caller{Limits: trust.Limits{MemoryBytes: 16 << 20}}
	res, err := h.Apply(context.Background(), small, abi.Request{Type: "probe", Name: "small", Properties: map[string]any{"alloc": 1 << 20}})
	if err != nil || res.Error != "" {
		t.Fatalf("capped caller after a big one: %+v, %v", res, err)
	}
	if after := instanceOf(h); after == nil || after == before {
		t.Fatal("the oversized instance was reused under a lower cap")
	}
}

func TestLimitsLowered(t *testing.T) {
	host := DefaultLimits()
	tests := []struct {
		name string
		c    trust.Limits
		want func(l *Limits)
	}{
		{"none", trust.Limits{}, func(*Limits) {}},
		{"lower", trust.Limits{MemoryBytes: 64 << 20, CallTimeout: time.Second, OutputBytes: 1, RequestBytes: 2, ExecOutputBytes: 3, HostCalls: 4},
			func(l *Limits) {
				l.MemoryPages, l.CallTimeout, l.OutputBytes, l.RequestBytes, l.ExecOutputBytes, l.HostCalls = 1024, time.Second, 1, 2, 3, 4
			}},
		{"higher never raises", trust.Limits{MemoryBytes: 1 << 40, CallTimeout: time.Hour, OutputBytes: 1 << 40, HostCalls: 1 << 40}, func(*Limits) {}},
		{"tiny memory is one page", trust.Limits{MemoryBytes: 1}, func(l *Limits) { l.MemoryPages = 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := host
			tc.want(&want)
			if got := host.lowered(tc.c); got != want {
				t.Fatalf("lowered = %+v, want %+v", got, want)
			}
		})
	}
}
