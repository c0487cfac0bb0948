package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/hostapi"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// probeWasm is the test plugin (testdata/plugins/probe), read once.
var probeWasm []byte

func TestMain(m *testing.M) {
	var err error
	probeWasm, err = os.ReadFile("../testdata/plugins/probe/probe.wasm")
	if err != nil {
		fmt.Fprintln(os.Stderr, "read probe plugin (go generate ./testdata/plugins/...):", err)
		os.Exit(1)
	}
	code := m.Run()
	if shared.h != nil {
		_ = shared.h.Close(context.Background())
	}
	os.Exit(code)
}

// testCacheDir keeps compiled code across test runs, so only the first run
// on a machine pays the cold compile.
func testCacheDir() string { return filepath.Join(os.TempDir(), "ccm-host-test-cache") }

// newProbeHost returns a Host serving the probe plugin as type "probe",
// closed at the end of the test.
func newProbeHost(t testing.TB, l Limits, opts ...Option) *Host {
	t.Helper()
	opts = append([]Option{WithModules(map[string][]byte{"probe": probeWasm}), WithCacheDir(testCacheDir()), WithLimits(l)}, opts...)
	h, err := New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// shared is one Host for the tests that do not need their own limits.
var shared struct {
	once sync.Once
	h    *Host
	err  error
}

func sharedHost(t testing.TB) *Host {
	t.Helper()
	shared.once.Do(func() {
		shared.h, shared.err = New(WithModules(map[string][]byte{"probe": probeWasm}), WithCacheDir(testCacheDir()),
			WithLimits(Limits{CallTimeout: 20 * time.Second}))
		if shared.err == nil {
			_, shared.err = shared.h.Info(context.Background(), trust.Caller{}, "probe")
		}
	})
	if shared.err != nil {
		t.Fatalf("shared host: %v", shared.err)
	}
	return shared.h
}

// hc is one host call for the probe to make.
type hc struct {
	Call    string `json:"call"`
	Request any    `json:"request"`
}

// grantDir grants everything under dir (resolved, as the host matches).
func grantDir(t testing.TB, dir string) trust.Chain {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return trust.Chain{{
		FSRead:  []string{real + "/**"},
		FSWrite: []string{real + "/**"},
		Exec:    []string{"/bin/sh", "/usr/bin/*", "/bin/*", real + "/**"},
		Users:   true,
	}}
}

// tempDir is t.TempDir with symlinks resolved, so expected paths match.
func tempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// apply makes the probe run calls in ccm_apply and returns one Response per
// call (Error set for a refused or failed call).
func apply(t testing.TB, h *Host, caller trust.Caller, calls ...hc) []abi.Response {
	t.Helper()
	res, err := h.Apply(context.Background(), caller, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{"calls": toAny(t, calls)}})
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if res.Error != "" {
		t.Fatalf("Apply result error: %s", res.Error)
	}
	return responses(t, res.State)
}

func responses(t testing.TB, state map[string]any) []abi.Response {
	t.Helper()
	b, err := json.Marshal(state["results"])
	if err != nil {
		t.Fatal(err)
	}
	var out []abi.Response
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode results %s: %v", b, err)
	}
	return out
}

// toAny round-trips v through JSON, as the engine's properties would be.
func toAny(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// okInto decodes a successful response, failing the test on an error one.
func okInto(t testing.TB, r abi.Response, v any) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("call failed: %v", r.Error)
	}
	if v != nil {
		if err := json.Unmarshal(r.Ok, v); err != nil {
			t.Fatalf("decode %s: %v", r.Ok, err)
		}
	}
}

// wantCode checks a response failed with code and a message containing msg.
func wantCode(t testing.TB, r abi.Response, code, msg string) {
	t.Helper()
	if r.Error == nil {
		t.Fatalf("call succeeded (%s), want %s error", r.Ok, code)
	}
	if r.Error.Code != code || !strings.Contains(r.Error.Message, msg) {
		t.Fatalf("error = %v, want code %s with %q", r.Error, code, msg)
	}
}

func TestInfo(t *testing.T) {
	h := sharedHost(t)
	info, err := h.Info(context.Background(), trust.Caller{}, "probe")
	if err != nil {
		t.Fatal(err)
	}
	if info.ABI != abi.Version || info.Type != "probe" || !info.Capabilities.Users {
		t.Fatalf("info = %+v", info)
	}
}

func TestInfoErrors(t *testing.T) {
	t.Parallel()
	h := newProbeHost(t, Limits{}, WithModules(map[string][]byte{"other": probeWasm, "broken": []byte("not wasm")}))
	tests := []struct {
		name    string
		typ     string
		want    string
		unknown bool
	}{
		{name: "unknown type", typ: "nosuch", want: "no plugin provides it", unknown: true},
		{name: "bad type name", typ: "../probe", want: "type names are lowercase", unknown: true},
		{name: "type mismatch", typ: "other", want: `plugin for type "other" describes type "probe"`},
		{name: "not wasm", typ: "broken", want: `compile plugin for type "broken"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.Info(context.Background(), trust.Caller{}, tt.typ)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if got := errors.Is(err, hostapi.ErrUnknownType); got != tt.unknown {
				t.Fatalf("errors.Is(ErrUnknownType) = %v, want %v", got, tt.unknown)
			}
		})
	}
}

func TestABIMismatchMessage(t *testing.T) {
	tests := []struct {
		name string
		abi  int
		want string
	}{
		{name: "older plugin", abi: 0, want: "speaks plugin abi 0, this ccm speaks abi [1]; rebuild the plugin against a newer sdk/"},
		{name: "newer plugin", abi: 7, want: "speaks plugin abi 7, this ccm speaks abi [1]; upgrade ccm"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := abiMismatch("x", tt.abi); !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %q, want %q", err, tt.want)
			}
		})
	}
}

func TestWithFS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "probe.wasm"), probeWasm, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := New(WithFS(os.DirFS(dir)), WithCacheDir(testCacheDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if _, err := h.Info(context.Background(), trust.Caller{}, "probe"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Info(context.Background(), trust.Caller{}, "file"); !errors.Is(err, hostapi.ErrUnknownType) {
		t.Fatalf("missing module: err = %v, want ErrUnknownType", err)
	}
}

func TestPreload(t *testing.T) {
	t.Parallel()
	h := newProbeHost(t, Limits{})
	if err := h.Preload(context.Background(), trust.Caller{}, []string{"probe", "probe"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Preload(context.Background(), trust.Caller{}, []string{"probe", "nosuch"}); !errors.Is(err, hostapi.ErrUnknownType) {
		t.Fatalf("err = %v, want ErrUnknownType", err)
	}
}

func TestValidate(t *testing.T) {
	h := sharedHost(t)
	got, err := h.Validate(context.Background(), trust.Caller{}, "probe", []abi.ValidateRequest{
		{Properties: map[string]any{"name": "a"}},
		{Properties: map[string]any{"invalid": "content and source are exclusive"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].Errors) != 0 || len(got[1].Errors) != 1 || got[1].Errors[0] != "content and source are exclusive" {
		t.Fatalf("got %+v", got)
	}
	_, err = h.Validate(context.Background(), trust.Caller{}, "probe", []abi.ValidateRequest{{Properties: map[string]any{"panic": "validate boom"}}})
	if err == nil || !strings.Contains(err.Error(), "plugin panicked in ccm_validate_batch: validate boom") {
		t.Fatalf("panic: err = %v", err)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	h := newProbeHost(t, Limits{})
	if _, err := h.Info(context.Background(), trust.Caller{}, "probe"); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Info(context.Background(), trust.Caller{}, "probe"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: err = %v, want ErrClosed", err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestLogging(t *testing.T) {
	h := sharedHost(t)
	var mu sync.Mutex
	var lines []string
	caller := trust.Caller{Resource: "probe#t", Log: func(level, msg string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, level+" "+msg)
	}}
	res, err := h.Apply(context.Background(), caller, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{
		"extism_log": "via the extism kernel",
		"calls":      toAny(t, []hc{{Call: abi.CallLog, Request: abi.LogRequest{Level: "info", Message: "via ccm_log"}}}),
	}})
	if err != nil || res.Error != "" {
		t.Fatalf("Apply: %v %s", err, res.Error)
	}
	want := []string{"warn via the extism kernel", "info via ccm_log"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("log lines = %q, want %q", lines, want)
	}
}

func TestGuestHasNoFilesystem(t *testing.T) {
	h := sharedHost(t)
	res, err := h.Apply(context.Background(), trust.Caller{}, abi.Request{Type: "probe", Name: "t", Properties: map[string]any{"guest_read": "/etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := res.State["guest_read_error"].(string); got == "<nil>" || got == "" {
		t.Fatalf("the guest read /etc/passwd through WASI: %v", res.State)
	}
}
