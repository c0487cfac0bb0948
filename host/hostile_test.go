package host

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Tests against testdata/plugins/hostile, a raw-ABI guest that attacks the
// host (the whole suite runs end to end in cmd/ccm/hostile_e2e_test.go).

func newHostileHost(t testing.TB, l Limits) *Host {
	t.Helper()
	wasm, err := os.ReadFile("../testdata/plugins/hostile/hostile.wasm")
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(WithModules(map[string][]byte{"hostile": wasm}), WithCacheDir(testCacheDir()), WithLimits(l))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

func attack(h *Host, name string, props map[string]any) (abi.Result, error) {
	p := map[string]any{"attack": name}
	for k, v := range props {
		p[k] = v
	}
	return h.Apply(context.Background(), trust.Caller{Resource: "hostile#" + name}, abi.Request{Type: "hostile", Name: name, Properties: p})
}

// TestHostCallLimit: a guest making a million host calls is stopped at
// Limits.HostCalls, long before call_timeout, with the limit named; a guest
// under the limit is not affected, and the instance is replaced.
func TestHostCallLimit(t *testing.T) {
	t.Parallel()
	h := newHostileHost(t, Limits{HostCalls: 1000, CallTimeout: 30 * time.Second})
	res, err := attack(h, "hostcall_flood", map[string]any{"count": 1000})
	if err != nil || res.Error != "made 1000 host calls, 0 refused" {
		t.Fatalf("1000 calls under a limit of 1000: %+v, %v", res, err)
	}
	start := time.Now()
	_, err = attack(h, "hostcall_flood", map[string]any{"count": 1000000})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "exceeded the host_calls limit of 1000 calls per call; the instance was discarded") {
		t.Fatalf("a million calls: err = %v, want the host_calls limit", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stopping the flood took %v", d)
	}
	if res, err := attack(h, "hostcall_flood", map[string]any{"count": 10}); err != nil || res.Error != "made 10 host calls, 0 refused" {
		t.Fatalf("next call: %+v, %v", res, err)
	}
}

// TestDefaultHostCallLimit: a zero HostCalls takes the default. A flood
// of a million ccm_log calls takes about 30 s (the Extism kernel never
// reuses a block, so calls slow down as they go); the default stops it
// after about 1-2 s on a 2-core VM (measured with hostcall_flood).
func TestDefaultHostCallLimit(t *testing.T) {
	if got := (Limits{}).withDefaults().HostCalls; got != 100000 {
		t.Fatalf("default HostCalls = %d", got)
	}
	if got := (Limits{HostCalls: 5}).withDefaults().HostCalls; got != 5 {
		t.Fatalf("HostCalls 5 became %d", got)
	}
}

// TestGuestExit: a guest that calls proc_exit(0) mid-call ends the call
// without an error from Extism. The host must fail that call, and a guest
// that exits after setting a valid output must not take the next call down
// with its closed instance. Regression: the next call failed with "module is
// closed".
func TestGuestExit(t *testing.T) {
	t.Parallel()
	h := newHostileHost(t, Limits{})
	_, err := attack(h, "exit", nil)
	if err == nil || !strings.Contains(err.Error(), "ccm_apply returned no output document") {
		t.Fatalf("exit mid-call: err = %v", err)
	}
	if res, err := attack(h, "wasi_env", nil); err != nil || !strings.Contains(res.Error, "environment has 0 variables") {
		t.Fatalf("call after an exit: %+v, %v", res, err)
	}
	res, err := attack(h, "exit_after_output", nil)
	if err != nil || !res.Changed {
		t.Fatalf("exit after output: %+v, %v", res, err)
	}
	if res, err := attack(h, "wasi_env", nil); err != nil || !strings.Contains(res.Error, "environment has 0 variables") {
		t.Fatalf("call after an exit after output: %+v, %v", res, err)
	}
}

func TestBatchHostCalls(t *testing.T) {
	tests := []struct {
		name    string
		perCall int64
		n       int
		want    int64
	}{
		{"one request", 100000, 1, 100000},
		{"per request", 100000, 256, 25600000},
		{"saturates", math.MaxInt64 / 2, 3, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := batchHostCalls(tt.perCall, tt.n); got != tt.want {
				t.Fatalf("batchHostCalls(%d, %d) = %d, want %d", tt.perCall, tt.n, got, tt.want)
			}
		})
	}
}
