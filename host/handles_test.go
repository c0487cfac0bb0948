package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// fileHost serves the built-in file plugin (plugins/wasm/file.wasm, a
// Preparer) as a checked module, for the handle tests.
func fileHost(t *testing.T) *Host {
	t.Helper()
	wasm, err := os.ReadFile("../plugins/wasm/file.wasm")
	if err != nil {
		t.Fatalf("read the file plugin (go generate ./plugins/...): %v", err)
	}
	h, err := New(WithModules(map[string][]byte{"file": wasm}), WithCacheDir(testCacheDir()),
		WithLimits(Limits{CallTimeout: 20 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	info, err := h.Info(context.Background(), trust.Caller{}, "file")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Handles {
		t.Fatal("the file plugin does not set handles (rebuild it: go generate ./plugins/...)")
	}
	return h
}

// handleCase is a stable file, one whose content changes and one to
// create, validated as the engine does (status mode, the scope's caller).
type handleCase struct {
	dir    string
	names  []string
	vreqs  []abi.ValidateRequest
	reqs   []abi.Request
	tokens []int64
}

func newHandleCase(t *testing.T, h *Host) *handleCase {
	t.Helper()
	c := &handleCase{dir: t.TempDir()}
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	for _, n := range []string{"stable", "changed", "new"} {
		name := filepath.Join(c.dir, n)
		props := map[string]any{"name": name, "ensure": "present", "content": "want " + n, "owner": uid, "group": gid, "mode": "0644"}
		c.names = append(c.names, name)
		c.vreqs = append(c.vreqs, abi.ValidateRequest{Properties: props})
		c.reqs = append(c.reqs, abi.Request{Type: "file", Name: name, Properties: props, NoState: true, WorkingDir: c.dir})
	}
	c.reset(t)
	return c
}

// reset puts the files as the case starts.
func (c *handleCase) reset(t *testing.T) {
	t.Helper()
	for _, f := range []struct{ name, content string }{{c.names[0], "want stable"}, {c.names[1], "old"}} {
		if err := os.WriteFile(f.name, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_ = os.Remove(c.names[2])
}

// validate validates the case and keeps the tokens.
func (c *handleCase) validate(t *testing.T, h *Host) {
	t.Helper()
	resps, err := h.Validate(context.Background(), trust.Caller{Mode: trust.ModeStatus}, "file", c.vreqs)
	if err != nil {
		t.Fatal(err)
	}
	c.tokens = c.tokens[:0]
	for i, r := range resps {
		if len(r.Errors) > 0 || r.Handle == 0 {
			t.Fatalf("validate %s = %+v; want valid, with a handle", c.names[i], r)
		}
		c.tokens = append(c.tokens, r.Handle)
	}
}

// apply applies the case in mode, with the tokens or without.
func (c *handleCase) apply(t *testing.T, h *Host, mode trust.Mode, withHandles bool) []abi.Result {
	t.Helper()
	reqs := make([]abi.Request, len(c.reqs))
	callers := make([]trust.Caller, len(c.reqs))
	for i, r := range c.reqs {
		if withHandles {
			r.Handle = c.tokens[i]
		}
		reqs[i] = r
		callers[i] = trust.Caller{Resource: "file#" + r.Name, Mode: mode}
	}
	res, err := h.ApplyBatch(context.Background(), callers, reqs, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res {
		res[i].DurationNS = 0
	}
	return res
}

// TestHandlesSameResults: with the real file plugin, a batch applied by
// handles gives exactly the results of the same batch with properties
// (stable, changed, created), in apply mode (one ccm_apply_batch) and in
// noop (one ccm_apply each), and the handles were really used: each is
// gone from the guest after its apply.
func TestHandlesSameResults(t *testing.T) {
	h := fileHost(t)
	for _, mode := range []trust.Mode{trust.ModeApply, trust.ModeNoop} {
		t.Run(mode.String(), func(t *testing.T) {
			c := newHandleCase(t, h)
			c.validate(t, h)
			without := c.apply(t, h, mode, false)
			c.reset(t)
			with := c.apply(t, h, mode, true)
			if !reflect.DeepEqual(with, without) {
				t.Fatalf("by handle:\n%+v\nwith properties:\n%+v", with, without)
			}
			if len(with) != 3 || with[0].Changed || !with[1].Changed || !with[2].Changed {
				t.Fatalf("results = %+v; want stable, changed, changed", with)
			}
			for _, r := range with {
				if r.Error != "" {
					t.Fatalf("results = %+v", with)
				}
			}
			again := c.apply(t, h, mode, true)
			for i, r := range again {
				if !strings.Contains(r.Error, "unknown validated-resource handle") {
					t.Errorf("%s applied twice by one handle: %+v; want the guest to have forgotten it", c.names[i], r)
				}
			}
		})
	}
}

// TestHandleNotSentAfterRecycle: a token of an instance that was discarded
// (after a trap, a timeout or a limit) never reaches the new instance: it
// gets the properties, and the results are those of a batch without
// handles.
func TestHandleNotSentAfterRecycle(t *testing.T) {
	h := fileHost(t)
	c := newHandleCase(t, h)
	c.validate(t, h)
	want := c.apply(t, h, trust.ModeApply, false)
	c.reset(t)

	p, err := h.plugin("file")
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	old := p.cur.serial
	p.discard(context.Background(), p.cur)
	p.mu.Unlock()

	got := c.apply(t, h, trust.ModeApply, true)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after recycle, by handle:\n%+v\nwant:\n%+v", got, want)
	}
	p.mu.Lock()
	serial := p.cur.serial
	p.mu.Unlock()
	if serial == old || uint64(c.tokens[0])>>32 != old {
		t.Fatalf("tokens %x: instance serial %d then %d", c.tokens, old, serial)
	}
	// A token naming the new instance with a handle it never made fails
	// the resource clearly in the guest.
	c.tokens = []int64{token(serial, 999), token(serial, 998), token(serial, 997)}
	for _, r := range c.apply(t, h, trust.ModeApply, true) {
		if !strings.Contains(r.Error, "unknown validated-resource handle 99") {
			t.Fatalf("unknown handle: %+v", r)
		}
	}
}

// TestHandlesNotForOtherPlugins: a plugin that does not set handles (the
// probe, built with this SDK but no Preparer) gets no handle from
// validation and, whatever token a caller puts in a request, the request it
// receives has none and carries its properties.
func TestHandlesNotForOtherPlugins(t *testing.T) {
	h := newProbeHost(t, Limits{CallTimeout: 20 * time.Second})
	ctx := context.Background()
	// stat: the probe stats "/" and answers its sha256 and existence only
	// when its properties arrived.
	props := map[string]any{"name": "x", "stat": "/"}
	resps, err := h.Validate(ctx, trust.Caller{}, "probe", []abi.ValidateRequest{{Properties: props}})
	if err != nil || len(resps) != 1 || resps[0].Handle != 0 {
		t.Fatalf("validate = %+v, %v; want no handle", resps, err)
	}
	p, _ := h.plugin("probe")
	p.mu.Lock()
	serial := p.cur.serial
	p.mu.Unlock()
	req := abi.Request{Type: "probe", Name: "x", Properties: props, Handle: token(serial, 1)}
	res, err := h.Apply(ctx, trust.Caller{Resource: "probe#x"}, req)
	if err != nil || res.Error != "" || res.State["exists"] != true {
		t.Fatalf("apply with a token = %+v, %v; the probe must get its properties and no handle", res, err)
	}
	batch, err := h.ApplyBatch(ctx, []trust.Caller{{Resource: "probe#x"}, {Resource: "probe#y"}},
		[]abi.Request{req, {Type: "probe", Name: "y", Properties: props, Handle: token(serial, 2)}}, false)
	if err != nil || len(batch) != 2 || batch[0].State["exists"] != true || batch[1].State["exists"] != true {
		t.Fatalf("batch with tokens = %+v, %v", batch, err)
	}
}

// TestForInstance: what a request becomes on the wire. Without a serial
// (a plugin without handles, or an export other than apply) the bytes are
// exactly those of the request without a handle, as before handles
// existed; with its instance's serial, the guest's handle and no
// properties; another instance's token is dropped.
func TestForInstance(t *testing.T) {
	props := map[string]any{"ensure": "present", "content": "x"}
	plain := abi.Request{Type: "file", Name: "/a", Properties: props, WorkingDir: "/"}
	withTok := plain
	withTok.Handle = token(7, 3)
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	only := func(v any, _ int) any { return v }
	if got, want := enc(only(forInstance(withTok, 0))), enc(plain); got != want {
		t.Errorf("serial 0:\n%s\nwant\n%s", got, want)
	}
	if got, want := enc(only(forInstance(withTok, 8))), enc(plain); got != want {
		t.Errorf("another instance:\n%s\nwant\n%s", got, want)
	}
	if v, sent := forInstance(withTok, 7); sent != 1 || v.(abi.Request).Handle != 3 || v.(abi.Request).Properties != nil || v.(abi.Request).Name != "/a" {
		t.Errorf("its instance: %+v, %d sent", v, sent)
	}
	batch := abi.BatchRequest{Requests: []abi.Request{withTok, plain}, StopOnFailure: true}
	if v, sent := forInstance(batch, 7); sent != 1 || v.(abi.BatchRequest).Requests[1].Handle != 0 {
		t.Errorf("batch, its instance: %+v, %d sent", v, sent)
	}
	if got, want := enc(only(forInstance(batch, 0))), enc(abi.BatchRequest{Requests: []abi.Request{plain, plain}, StopOnFailure: true}); got != want {
		t.Errorf("batch, serial 0:\n%s\nwant\n%s", got, want)
	}
	if batch.Requests[0].Handle != withTok.Handle {
		t.Error("forInstance changed the caller's batch")
	}
	for _, bad := range []struct {
		serial uint64
		h      int64
	}{{0, 1}, {maxSerial + 1, 1}, {1, 0}, {1, -1}, {1, handleMax + 1}} {
		if tok := token(bad.serial, bad.h); tok != 0 {
			t.Errorf("token(%d, %d) = %d, want 0", bad.serial, bad.h, tok)
		}
	}
}

// TestForgetHandles: at the end of a run, an instance keeping forgetAt
// validated resources whose handles were never sent is discarded (a
// long-lived host would carry them from run to run); one whose handles were
// all used, or with fewer unsent, stays; an unsent token then gets the
// properties, like any after a recycle.
func TestForgetHandles(t *testing.T) {
	defer func(n int) { forgetAt = n }(forgetAt)
	forgetAt = 4
	h := fileHost(t)
	p, _ := h.plugin("file")
	serial := func() uint64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.cur.serial
	}
	c := newHandleCase(t, h)
	c.validate(t, h)
	before := serial()
	c.apply(t, h, trust.ModeApply, true) // all three handles used
	h.ForgetHandles(context.Background())
	p.mu.Lock()
	live := len(p.live)
	p.mu.Unlock()
	if live != 1 || serial() != before {
		t.Fatalf("an instance with no unsent handle was discarded (%d live)", live)
	}
	c.reset(t)
	c.validate(t, h) // 3 unsent: fewer than forgetAt
	h.ForgetHandles(context.Background())
	if serial() != before {
		t.Fatal("an instance with fewer than forgetAt unsent handles was discarded")
	}

	c.reset(t)
	c.validate(t, h)
	want := c.apply(t, h, trust.ModeApply, false)
	c.reset(t)
	c.validate(t, h)
	two := *c
	two.reqs, two.tokens = c.reqs[:2], c.tokens[:2]
	if got := two.apply(t, h, trust.ModeApply, true); !reflect.DeepEqual(got, want[:2]) {
		t.Fatalf("first two by handle: %+v, want %+v", got, want[:2])
	}
	h.ForgetHandles(context.Background())
	p.mu.Lock()
	live = len(p.live)
	p.mu.Unlock()
	if live != 0 {
		t.Fatal("the instance keeping 7 unsent handles was not discarded")
	}
	last := *c
	last.reqs, last.tokens = c.reqs[2:], c.tokens[2:]
	if got := last.apply(t, h, trust.ModeApply, true); !reflect.DeepEqual(got, want[2:]) {
		t.Fatalf("the third after forgetting: %+v, want %+v", got, want[2:])
	}
}
