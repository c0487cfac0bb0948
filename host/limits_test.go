package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// instanceOf returns the probe's current instance (nil when discarded).
func instanceOf(h *Host) any {
	h.mu.Lock()
	p := h.plugins["probe"]
	h.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return nil
	}
	return p.cur.inst
}

// TestFailedCallsDiscardInstance makes the probe fail in each way a guest
// can, and checks the error names the cause, the instance is replaced, and
// the next call works.
func TestFailedCallsDiscardInstance(t *testing.T) {
	t.Parallel()
	h := newProbeHost(t, Limits{CallTimeout: 700 * time.Millisecond, MemoryPages: 128})
	tests := []struct {
		name  string
		props map[string]any
		want  string
		limit bool
	}{
		{name: "infinite loop", props: map[string]any{"spin": true}, want: "exceeded the call_timeout limit of 700ms", limit: true},
		{name: "memory", props: map[string]any{"alloc": 64 << 20}, want: "out of memory", limit: true},
		{name: "panic", props: map[string]any{"panic": "boom"}, want: "plugin panicked in ccm_apply: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := h.Apply(context.Background(), trust.Caller{}, abi.Request{Type: "probe", Name: "warm"}); err != nil {
				t.Fatal(err)
			}
			before := instanceOf(h)
			start := time.Now()
			_, err := h.Apply(context.Background(), trust.Caller{}, abi.Request{Type: "probe", Name: "t", Properties: tt.props})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if errors.Is(err, ErrLimit) != tt.limit {
				t.Fatalf("errors.Is(err, ErrLimit) = %v, want %v", !tt.limit, tt.limit)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("the failure took %v", time.Since(start))
			}
			if instanceOf(h) != nil {
				t.Fatal("the failed instance was kept")
			}
			res, err := h.Apply(context.Background(), trust.Caller{}, abi.Request{Type: "probe", Name: "after"})
			if err != nil || !res.Changed {
				t.Fatalf("next call: %+v, %v", res, err)
			}
			if after := instanceOf(h); after == nil || after == before {
				t.Fatal("the next call did not get a fresh instance")
			}
		})
	}
	if !strings.Contains(errString(h.Apply(context.Background(), trust.Caller{}, abi.Request{Type: "probe", Properties: map[string]any{"alloc": 64 << 20}})),
		"memory_mb limit of 8 MiB") {
		t.Fatal("the memory error does not name the limit")
	}
}

func errString(_ abi.Result, err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCallCancelled(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := h.Apply(ctx, trust.Caller{}, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{"spin": true}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the caller's context error", err)
	}
}

// TestExecMovesDeadline checks that time in an exec with its own timeout
// does not count against call_timeout, and time in one without does.
func TestExecMovesDeadline(t *testing.T) {
	t.Parallel()
	h := newProbeHost(t, Limits{CallTimeout: time.Second})
	caller := trust.Caller{Grants: trust.Chain{trust.All()}}
	r := apply(t, h, caller, hc{abi.CallExec, abi.ExecRequest{Argv: []string{"sleep", "1.5"}, TimeoutMS: 5000}})[0]
	var got abi.ExecResponse
	okInto(t, r, &got)
	if got.TimedOut || got.ExitCode != 0 {
		t.Fatalf("exec with its own timeout: %+v", got)
	}
	_, err := h.Apply(context.Background(), caller, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{
		"calls": toAny(t, []hc{{abi.CallExec, abi.ExecRequest{Argv: []string{"sleep", "5"}}}}),
	}})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "call_timeout") {
		t.Fatalf("exec without a timeout: err = %v, want call_timeout", err)
	}
}

// TestSizeLimits checks request_bytes and output_bytes on both ways a
// document can travel (the stdio transport and Extism kernel blocks).
func TestSizeLimits(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			big := filepath.Join(dir, "big")
			mustWrite(t, big, strings.Repeat("x", 4096), 0o644)
			caller := trust.Caller{Grants: grantDir(t, dir)}

			h := tr.host(t, Limits{RequestBytes: 2048})
			r := apply(t, h, caller,
				hc{abi.CallFSWrite, abi.FSWriteRequest{Path: filepath.Join(dir, "w"), Content: make([]byte, 4096), Mode: 0o644}},
				hc{abi.CallFSRead, abi.FSReadRequest{Path: big}},
				hc{abi.CallFSRead, abi.FSReadRequest{Path: big, MaxBytes: 1 << 20}},
			)
			wantCode(t, r[0], abi.CodeTooLarge, "exceeds the request_bytes limit of 2048")
			wantCode(t, r[1], abi.CodeTooLarge, "larger than the limit of 2048 bytes")
			wantCode(t, r[2], abi.CodeTooLarge, "larger than the limit of 2048 bytes")
			if _, err := os.Lstat(filepath.Join(dir, "w")); !os.IsNotExist(err) {
				t.Fatal("an oversized write happened")
			}

			h = tr.host(t, Limits{OutputBytes: 1024})
			_, err := h.Apply(context.Background(), caller, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{
				"calls": toAny(t, []hc{{abi.CallFSRead, abi.FSReadRequest{Path: big}}}),
			}})
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "output_bytes limit of 1024") {
				t.Fatalf("err = %v, want output_bytes", err)
			}
		})
	}
}

func TestNewRejectsBadLimits(t *testing.T) {
	if _, err := New(WithLimits(Limits{MemoryPages: 70000}), WithCacheDir("")); err == nil || !strings.Contains(err.Error(), "65536") {
		t.Fatalf("err = %v", err)
	}
}
