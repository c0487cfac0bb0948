package host

import (
	"context"
	"encoding/json"
	"fmt"

	extism "github.com/extism/go-sdk"

	"github.com/ccm-dev/ccm/host/hostcall"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// dispatch answers one host call. It never panics: a handler bug becomes an
// io error for the plugin instead of a trap that kills the instance.
func dispatch(ctx context.Context, st *callState, table map[string]hostcall.Handler, call string, raw []byte) (resp abi.Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = abi.Response{Error: &abi.CallError{Code: abi.CodeIO, Message: fmt.Sprintf("BUG: host call %s panicked: %v", call, p)}}
		}
	}()
	if st == nil {
		return abi.Response{Error: &abi.CallError{Code: abi.CodeInvalid, Message: call + " made outside a ccm call"}}
	}
	if int64(len(raw)) > st.limits.RequestBytes {
		return tooLarge(call, int64(len(raw)), st.limits.RequestBytes)
	}
	fn, ok := table[call]
	if !ok {
		return abi.Response{Error: &abi.CallError{Code: abi.CodeInvalid, Message: "unknown host call " + call}}
	}
	ok2, cerr := fn(ctx, &st.State, raw)
	if cerr != nil {
		return abi.Response{Error: cerr}
	}
	var b []byte
	var err error
	if sr, isStat := ok2.(abi.FSStatResponse); isStat {
		b = hostcall.AppendStatResponse(make([]byte, 0, 256), sr) // the most frequent answer
	} else {
		b, err = json.Marshal(ok2)
	}
	if err != nil {
		return abi.Response{Error: &abi.CallError{Code: abi.CodeIO, Message: "encode " + call + " response: " + err.Error()}}
	}
	return abi.Response{Ok: b}
}

func tooLarge(call string, n, limit int64) abi.Response {
	return abi.Response{Error: &abi.CallError{Code: abi.CodeTooLarge,
		Message: fmt.Sprintf("%s request of %d bytes exceeds the request_bytes limit of %d", call, n, limit)}}
}

// hostFunctions builds the Extism host functions, one per host call.
func (h *Host) hostFunctions() []extism.HostFunction {
	table := hostcall.Handlers()
	out := make([]extism.HostFunction, 0, len(table))
	for name := range table {
		fn := extism.NewHostFunctionWithStack(name, func(ctx context.Context, _ *extism.CurrentPlugin, stack []uint64) {
			stack[0] = serveHostCall(ctx, table, name, stack[0])
		}, []extism.ValueType{extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR})
		fn.SetNamespace(abi.HostNamespace)
		out = append(out, fn)
	}
	return out
}

// serveHostCall reads the request block at offset (refusing an oversized one
// before copying it), dispatches, and returns the offset of a new block with
// the response; 0 when even that cannot be written (the guest reports it).
// An offset marked abi.StdioCall is a request on the stdio transport.
func serveHostCall(ctx context.Context, table map[string]hostcall.Handler, call string, offset uint64) uint64 {
	if ctx.Err() != nil {
		// The call is over (deadline, limit, signal). A checked guest is
		// being closed already; a built-in, which runs without the check
		// (trusted.go), is stopped here: the panic becomes the call's error.
		panic(fmt.Errorf("host call %s after the plugin call ended: %w", call, context.Cause(ctx)))
	}
	st := callStateFrom(ctx)
	if st != nil && !st.countCall() {
		return 0 // no answer: the call is over (see countCall)
	}
	if offset&abi.StdioCall != 0 {
		return serveStdioCall(ctx, st, table, call, offset&^abi.StdioCall)
	}
	k, err := kernelFor(ctx, st)
	if err != nil {
		return 0
	}
	var limit int64
	if st != nil {
		limit = st.limits.RequestBytes
	}
	var resp abi.Response
	raw, n, err := k.read(ctx, offset, limit)
	switch {
	case err != nil:
		resp = badBlock(call, err.Error())
	case limit > 0 && int64(n) > limit:
		resp = tooLarge(call, int64(n), limit)
	default:
		resp = dispatch(ctx, st, table, call, raw)
	}
	out, err := encodeResponse(resp)
	if err != nil {
		return 0
	}
	off, err := k.write(ctx, out)
	if err != nil {
		return 0
	}
	return off
}

// encodeResponse writes resp as JSON. An Ok document, which json.Marshal
// just wrote, is wrapped as it is: marshalling the abi.Response would check
// and copy it a second time.
func encodeResponse(resp abi.Response) ([]byte, error) {
	if resp.Error != nil || resp.Ok == nil {
		return json.Marshal(resp)
	}
	out := make([]byte, 0, len(`{"ok":}`)+len(resp.Ok))
	out = append(out, `{"ok":`...)
	out = append(out, resp.Ok...)
	return append(out, '}'), nil
}

func badBlock(call, why string) abi.Response {
	return abi.Response{Error: &abi.CallError{Code: abi.CodeInvalid, Message: call + ": bad request block: " + why}}
}
