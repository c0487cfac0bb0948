package host

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// logs records the ccm_log lines each caller received.
type logs struct {
	mu    sync.Mutex
	lines map[string][]string
}

func (l *logs) caller(name string, grants trust.Chain) trust.Caller {
	return trust.Caller{Resource: "probe#" + name, Grants: grants, Log: func(_, msg string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.lines == nil {
			l.lines = map[string][]string{}
		}
		l.lines[name] = append(l.lines[name], msg)
	}}
}

func (l *logs) of(name string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines[name]
}

// batchOf builds one request per props, named r0, r1, ..., each logging its
// own name through ccm_log, with callers of one scope.
func batchOf(t *testing.T, l *logs, grants trust.Chain, props ...map[string]any) ([]trust.Caller, []abi.Request) {
	t.Helper()
	var callers []trust.Caller
	var reqs []abi.Request
	for i, p := range props {
		name := "r" + string(rune('0'+i))
		if _, ok := p["calls"]; !ok && p["panic"] == nil && p["stat"] == nil {
			p["calls"] = toAny(t, []hc{{Call: abi.CallLog, Request: abi.LogRequest{Level: "info", Message: name}}})
		}
		callers = append(callers, l.caller(name, grants))
		reqs = append(reqs, abi.Request{Type: "probe", Name: name, Properties: p})
	}
	return callers, reqs
}

// TestApplyBatch runs batches through the probe's ccm_apply_batch and, with
// the export hidden, through the fallback loop of ccm_apply.
func TestApplyBatch(t *testing.T) {
	t.Parallel()
	dir := tempDir(t)
	inside := filepath.Join(dir, "f")
	mustWrite(t, inside, "content", 0o644)
	grants := grantDir(t, dir)
	outside := filepath.Join(tempDir(t), "g")
	mustWrite(t, outside, "x", 0o644)

	tests := []struct {
		name     string
		noExport bool // hide ccm_apply_batch: the host loops over ccm_apply
		props    []map[string]any
		stop     bool
		// want is, per result, "" for success or a substring of its Error.
		want    []string
		wantErr string // ApplyBatch's own error
		// oneCall: every log line reached callers[0] (one plugin call).
		oneCall bool
	}{
		{
			name:    "results in order",
			props:   []map[string]any{{}, {"stat": inside}, {}},
			want:    []string{"", "", ""},
			oneCall: true,
		},
		{
			name:  "grants apply to each request",
			props: []map[string]any{{"stat": inside}, {"stat": outside}, {}},
			want:  []string{"", "fs_read not granted", ""},
		},
		{
			name:  "stop_on_failure stops after the failed one",
			props: []map[string]any{{}, {"panic": "boom"}, {}},
			stop:  true,
			want:  []string{"", "plugin panicked in ccm_apply_batch: boom"},
		},
		{
			name:  "without stop_on_failure all run",
			props: []map[string]any{{}, {"stat": outside}, {}},
			want:  []string{"", "fs_read not granted", ""},
		},
		{
			name:     "fallback loop",
			noExport: true,
			props:    []map[string]any{{}, {"stat": inside}, {}},
			want:     []string{"", "", ""},
		},
		{
			name:     "fallback loop stops at a failed result",
			noExport: true,
			props:    []map[string]any{{}, {"stat": outside}, {}},
			stop:     true,
			want:     []string{"", "fs_read not granted"},
		},
		{
			name:     "fallback loop returns the results before a crash",
			noExport: true,
			props:    []map[string]any{{}, {"panic": "boom"}, {}},
			want:     []string{""},
			wantErr:  "plugin panicked in ccm_apply: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newProbeHost(t, Limits{})
			if tt.noExport {
				hideExport(t, h, abi.ExportApplyBatch)
			}
			var l logs
			callers, reqs := batchOf(t, &l, grants, tt.props...)
			results, err := h.ApplyBatch(context.Background(), callers, reqs, tt.stop)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("ApplyBatch: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if len(results) != len(tt.want) {
				t.Fatalf("%d results, want %d: %+v", len(results), len(tt.want), results)
			}
			for i, want := range tt.want {
				got := results[i].Error
				if (want == "") != (got == "") || !strings.Contains(got, want) {
					t.Errorf("result %d error = %q, want %q", i, got, want)
				}
			}
			if tt.want[0] == "" && results[0].State == nil {
				t.Errorf("result 0 has no probe state: %+v", results[0])
			}
			if tt.oneCall {
				if got := l.of("r0"); strings.Join(got, ",") != "r0,r2" {
					t.Errorf("callers[0] logged %q, want r0 and r2: one call acting for callers[0]", got)
				}
			}
			if tt.noExport && len(results) > 2 {
				if got := l.of("r2"); len(got) != 1 {
					t.Errorf("callers[2] logged %q, want its own line: one call per request", got)
				}
			}
		})
	}
}

// hideExport makes h's probe look as if its module did not export name.
func hideExport(t testing.TB, h *Host, name string) {
	t.Helper()
	if _, err := h.Info(context.Background(), trust.Caller{}, "probe"); err != nil {
		t.Fatal(err)
	}
	p := h.plugins["probe"]
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exports[name] = false
}

// TestApplyBatchReadOnlyGoesOneByOne checks that a noop batch is not sent as
// one call but as noop ccm_apply calls, the mode forced on each.
func TestApplyBatchReadOnlyGoesOneByOne(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	var l logs
	callers, reqs := batchOf(t, &l, nil, map[string]any{}, map[string]any{})
	for i := range callers {
		callers[i].Mode = trust.ModeNoop
	}
	results, err := h.ApplyBatch(context.Background(), callers, reqs, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.State["noop"] != true {
			t.Errorf("result %d: state %v, want noop true", i, r.State)
		}
	}
	if got := l.of("r1"); len(got) != 1 {
		t.Errorf("callers[1] logged %q, want its own line", got)
	}
}

// TestApplyBatchRefusesMixedScopes checks the guard against a batch that
// one call cannot act for.
func TestApplyBatchRefusesMixedScopes(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	dir := tempDir(t)
	tests := []struct {
		name   string
		change func(callers []trust.Caller, reqs []abi.Request) ([]trust.Caller, []abi.Request)
		want   string
	}{
		{name: "modes differ", want: "modes apply and noop", change: func(c []trust.Caller, r []abi.Request) ([]trust.Caller, []abi.Request) {
			c[1].Mode = trust.ModeNoop
			return c, r
		}},
		{name: "limits differ", want: "two sets of limits", change: func(c []trust.Caller, r []abi.Request) ([]trust.Caller, []abi.Request) {
			c[1].Limits.CallTimeout = time.Second
			return c, r
		}},
		{name: "grant chains differ", want: "two grant chains", change: func(c []trust.Caller, r []abi.Request) ([]trust.Caller, []abi.Request) {
			c[1].Grants = c[1].Grants.Narrow(trust.Grant{FSRead: []string{dir + "/**"}})
			return c, r
		}},
		{name: "types differ", want: `types "probe" and "file"`, change: func(c []trust.Caller, r []abi.Request) ([]trust.Caller, []abi.Request) {
			r[1].Type = "file"
			return c, r
		}},
		{name: "callers missing", want: "1 callers for 2 requests", change: func(c []trust.Caller, r []abi.Request) ([]trust.Caller, []abi.Request) {
			return c[:1], r
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l logs
			callers, reqs := batchOf(t, &l, grantDir(t, dir), map[string]any{}, map[string]any{})
			callers, reqs = tt.change(callers, reqs)
			results, err := h.ApplyBatch(context.Background(), callers, reqs, false)
			if err == nil || !strings.Contains(err.Error(), "BUG") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a BUG error with %q", err, tt.want)
			}
			if results != nil || l.of("r0") != nil {
				t.Fatalf("the batch ran: results %v, logs %v", results, l.of("r0"))
			}
		})
	}
}

// TestApplyBatchEqualChainsShareACall checks that equal chains held in
// different slices still count as one scope.
func TestApplyBatchEqualChainsShareACall(t *testing.T) {
	t.Parallel()
	h := sharedHost(t)
	dir := tempDir(t)
	var l logs
	callers, reqs := batchOf(t, &l, grantDir(t, dir), map[string]any{}, map[string]any{})
	callers[1].Grants = grantDir(t, dir)
	if _, err := h.ApplyBatch(context.Background(), callers, reqs, false); err != nil {
		t.Fatal(err)
	}
	if got := l.of("r0"); len(got) != 2 {
		t.Fatalf("callers[0] logged %q, want both lines of the one call", got)
	}
}

// TestApplyBatchTrap checks that a guest stuck in a batch is stopped by the
// batch's deadline, the whole batch fails with the limit, and the next call
// gets a fresh instance.
func TestApplyBatchTrap(t *testing.T) {
	t.Parallel()
	h := newProbeHost(t, Limits{CallTimeout: 300 * time.Millisecond})
	var l logs
	callers, reqs := batchOf(t, &l, nil, map[string]any{}, map[string]any{"spin": true}, map[string]any{})
	// Compile and describe first: the deadline is the batch's, not a cold
	// compile's (minutes under -race on a loaded machine).
	if _, err := h.Info(context.Background(), trust.Caller{}, "probe"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	results, err := h.ApplyBatch(context.Background(), callers, reqs, false)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "call_timeout limit of 900ms") {
		t.Fatalf("err = %v, want the call_timeout limit scaled to the batch", err)
	}
	if took := time.Since(start); took < 900*time.Millisecond || took > 5*time.Second {
		t.Fatalf("the batch was stopped after %v, want its 900ms deadline", took)
	}
	if len(results) != 0 {
		t.Fatalf("results = %v, want none", results)
	}
	if instanceOf(h) != nil {
		t.Fatal("the instance was kept after the trap")
	}
	if _, err := h.ApplyBatch(context.Background(), callers[:1], reqs[:1], false); err != nil {
		t.Fatalf("call after the trap: %v", err)
	}
}

func TestBatchTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		perCall time.Duration
		n       int
		want    time.Duration
	}{
		{name: "scales with the batch", perCall: time.Second, n: 30, want: 30 * time.Second},
		{name: "capped", perCall: time.Minute, n: 256, want: batchTimeoutCap},
		{name: "at the cap", perCall: time.Minute, n: 10, want: batchTimeoutCap},
		{name: "a long call timeout is kept", perCall: time.Hour, n: 3, want: time.Hour},
		{name: "one request", perCall: time.Second, n: 1, want: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := batchTimeout(tt.perCall, tt.n); got != tt.want {
				t.Fatalf("batchTimeout(%v, %d) = %v, want %v", tt.perCall, tt.n, got, tt.want)
			}
		})
	}
}

func TestCheckBatchResults(t *testing.T) {
	t.Parallel()
	ok, failed := abi.Result{}, abi.Result{Error: "x"}
	tests := []struct {
		name    string
		results []abi.Result
		n       int
		stop    bool
		want    string // "" = accepted
	}{
		{name: "all", results: []abi.Result{ok, failed, ok}, n: 3},
		{name: "stopped at a failure", results: []abi.Result{ok, failed}, n: 3, stop: true},
		{name: "too many", results: []abi.Result{ok, ok}, n: 1, want: "returned 2 results for 1 requests"},
		{name: "short without stop", results: []abi.Result{ok, failed}, n: 3, want: "without stop_on_failure"},
		{name: "stopped without a failure", results: []abi.Result{ok}, n: 3, stop: true, want: "without a failed result"},
		{name: "none", results: nil, n: 2, stop: true, want: "stopped after 0 of 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkBatchResults("probe", tt.results, tt.n, tt.stop)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestEncodeResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		resp abi.Response
	}{
		{name: "ok", resp: abi.Response{Ok: []byte(`{"exists":true,"owner":"r\u00e9"}`)}},
		{name: "empty ok", resp: abi.Response{Ok: []byte(`{}`)}},
		{name: "error", resp: abi.Response{Error: &abi.CallError{Code: abi.CodeDenied, Message: "no <way>"}}},
		{name: "nothing", resp: abi.Response{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeResponse(tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(tt.resp)
			var g, w any
			if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || !reflect.DeepEqual(g, w) {
				t.Fatalf("encodeResponse = %s, json.Marshal = %s", got, want)
			}
		})
	}
}
