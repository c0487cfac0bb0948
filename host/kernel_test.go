package host

import (
	"context"
	"encoding/json"
	"testing"

	extism "github.com/extism/go-sdk"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestKernelBadOffsets gives a host call request offsets that are no block
// (as a buggy or hostile guest could): each gets an error response, never a
// panic or another document.
func TestKernelBadOffsets(t *testing.T) {
	t.Parallel()
	h := newProbeHost(t, Limits{RequestBytes: 4096})
	hideExport(t, h, abi.ExportStdio)
	apply(t, h, trust.Caller{}, hc{abi.CallLog, abi.LogRequest{Level: "info", Message: "x"}})
	p := h.plugins["probe"]
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.cur.kernel.k
	if k == nil {
		t.Fatal("no kernel cached after a host call")
	}
	st := newCallState(abi.ExportApply, "", trust.Caller{}, h.limits)
	st.HostCalls, st.kernel = true, &p.cur.kernel
	ctx := context.WithValue(withCallState(context.Background(), st), extism.PluginCtxKey("extism"), k.mod)
	size := uint64(k.mod.Memory().Size())

	for _, off := range []uint64{0, 1, 7, 100, size - 1, size, size + 100, 1 << 40} {
		got := serveHostCall(ctx, hostcall.Handlers(), abi.CallLog, off)
		if got == 0 {
			t.Fatalf("offset %d: no response block", off)
		}
		raw, _, err := k.read(ctx, got, 0)
		if err != nil {
			t.Fatalf("offset %d: read the response: %v", off, err)
		}
		var resp abi.Response
		if err := json.Unmarshal(raw, &resp); err != nil || resp.Error == nil {
			t.Fatalf("offset %d: response %s, want an error", off, raw)
		}
		if c := resp.Error.Code; c != abi.CodeInvalid && c != abi.CodeTooLarge {
			t.Fatalf("offset %d: code %s (%s), want invalid or too_large", off, c, resp.Error.Message)
		}
	}
}
