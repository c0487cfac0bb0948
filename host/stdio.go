package host

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// stdio is one instance's end of the stdio transport (abi.ExportStdio): the
// guest's WASI stdin reads in, and its stdout writes to out. wazero serves
// both by copying straight between these buffers and the guest's memory, one
// call per document, where the Extism kernel moves 8 bytes per call and costs
// a nested wasm call (and a goroutine) per block.
//
// Calls to an instance are serialised (plugin.mu), so the buffers are never
// shared. For a guest that does not export abi.ExportStdio, out is off and
// discards what it is given, as a plugin's stdout always was.
type stdio struct {
	in  stdinBuffer
	out stdoutBuffer
}

// keepBuffer is the largest stdout buffer kept from one call to the next.
const keepBuffer = 1 << 20

var errStdoutFull = errors.New("stdout is over the plugin's size limits")

// stdinBuffer is what the guest reads next from stdin; then EOF.
type stdinBuffer struct {
	data []byte
	off  int
}

func (b *stdinBuffer) Read(p []byte) (int, error) {
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	return n, nil
}

func (b *stdinBuffer) set(data []byte) { b.data, b.off = data, 0 }

// stdoutBuffer collects what the guest writes to stdout, up to max bytes.
type stdoutBuffer struct {
	on       bool
	max      int64
	buf      []byte
	overflow bool
}

func (b *stdoutBuffer) Write(p []byte) (int, error) {
	if !b.on {
		return len(p), nil
	}
	if b.overflow || int64(len(b.buf))+int64(len(p)) > b.max {
		b.overflow = true
		return 0, errStdoutFull
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// reset empties the buffer for the next document.
func (b *stdoutBuffer) reset() {
	b.overflow = false
	if cap(b.buf) > keepBuffer {
		b.buf = nil
		return
	}
	b.buf = b.buf[:0]
}

// take returns what was written and leaves the buffer empty.
func (b *stdoutBuffer) take() []byte {
	out := b.buf
	b.buf = nil
	return out
}

// begin readies the transport for one export call; it reports whether the
// call uses it (the guest speaks it and there is an input to send).
func (s *stdio) begin(speaks bool, input []byte, limits Limits) bool {
	s.out.on = speaks
	s.out.max = max(limits.OutputBytes, limits.RequestBytes)
	s.out.reset()
	use := speaks && len(input) > 0
	if use {
		s.in.set(input)
	} else {
		s.in.set(nil)
	}
	return use
}

// serveStdioCall answers a host call made on the stdio transport: the
// request is the last n bytes the guest wrote to stdout, the response goes
// to its stdin, and the result is abi.StdioCall|len(response), or 0 when even
// an error response cannot be given.
func serveStdioCall(ctx context.Context, st *callState, table map[string]hostcall.Handler, call string, n uint64) uint64 {
	if st == nil || st.stdio == nil {
		return 0 // not on the transport: the guest cannot read an answer
	}
	s := st.stdio
	var resp abi.Response
	switch {
	case int64(n) > st.limits.RequestBytes:
		resp = tooLarge(call, int64(n), st.limits.RequestBytes)
	case s.out.overflow:
		resp = tooLarge(call, int64(n), min(st.limits.RequestBytes, s.out.max))
	case n > uint64(len(s.out.buf)):
		resp = badBlock(call, fmt.Sprintf("request of %d bytes, but %d were written to stdout", n, len(s.out.buf)))
	default:
		// dispatch is done with the request before the buffer is reused.
		resp = dispatch(ctx, st, table, call, s.out.buf[uint64(len(s.out.buf))-n:])
	}
	s.out.reset()
	out, err := encodeResponse(resp)
	if err != nil {
		return 0
	}
	s.in.set(out)
	return abi.StdioCall | uint64(len(out))
}
