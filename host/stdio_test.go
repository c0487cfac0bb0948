package host

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// transports are the two ways documents travel between the host and the
// probe: the stdio transport (the probe exports abi.ExportStdio) and Extism
// kernel blocks (the export hidden, as for a guest built with another PDK).
var transports = []struct {
	name string
	host func(t *testing.T, l Limits) *Host
}{
	{name: "stdio", host: func(t *testing.T, l Limits) *Host { return newProbeHost(t, l) }},
	{name: "kernel", host: func(t *testing.T, l Limits) *Host {
		h := newProbeHost(t, l)
		hideExport(t, h, abi.ExportStdio)
		return h
	}},
}

// TestTransports makes the same host calls, one apply and one batch, over
// both transports, and checks the answers and which transport carried them.
func TestTransports(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			dir := tempDir(t)
			file := filepath.Join(dir, "f")
			content := strings.Repeat("é\"\\\n", 3000) // 15 KB, escapes included
			caller := trust.Caller{Grants: grantDir(t, dir)}
			h := tr.host(t, Limits{})

			r := apply(t, h, caller,
				hc{abi.CallFSWrite, abi.FSWriteRequest{Path: file, Content: []byte(content), Mode: 0o640}},
				hc{abi.CallFSRead, abi.FSReadRequest{Path: file}},
				hc{abi.CallFSStat, abi.FSStatRequest{Path: file, Checksum: true}},
				hc{abi.CallFSStat, abi.FSStatRequest{Path: filepath.Join(dir, "missing")}},
				hc{abi.CallFSRead, abi.FSReadRequest{Path: "relative"}},
			)
			var read abi.FSReadResponse
			okInto(t, r[0], nil)
			okInto(t, r[1], &read)
			if string(read.Content) != content {
				t.Fatalf("read back %d bytes, want the %d written", len(read.Content), len(content))
			}
			var st abi.FSStatResponse
			okInto(t, r[2], &st)
			if !st.Exists || st.Size != int64(len(content)) || st.Mode != 0o640 || len(st.SHA256) != 64 {
				t.Fatalf("stat = %+v", st)
			}
			okInto(t, r[3], &st)
			if st.Exists {
				t.Fatal("a missing file exists")
			}
			wantCode(t, r[4], abi.CodeInvalid, "not absolute")

			callers := []trust.Caller{caller, caller}
			reqs := []abi.Request{
				{Type: "probe", Name: "a", Properties: map[string]any{"stat": file}},
				{Type: "probe", Name: "b", Properties: map[string]any{"stat": filepath.Join(dir, "missing")}},
			}
			results, err := h.ApplyBatch(context.Background(), callers, reqs, false)
			if err != nil || len(results) != 2 || results[0].State["exists"] != true || results[1].State["exists"] != false {
				t.Fatalf("batch: %v %+v", err, results)
			}

			p := h.plugins["probe"]
			p.mu.Lock()
			used := p.cur.stdio.out.on && p.cur.stdio.in.data != nil
			p.mu.Unlock()
			if used != (tr.name == "stdio") {
				t.Fatalf("stdio transport used = %v", used)
			}
		})
	}
}

// TestStdioCallOffTransport checks a host call marked for the stdio
// transport outside a call that uses it gets no answer (the guest reports
// it), instead of reading another document.
func TestStdioCallOffTransport(t *testing.T) {
	t.Parallel()
	st := newCallState(abi.ExportApply, "", trust.Caller{}, DefaultLimits())
	st.HostCalls = true
	if got := serveHostCall(context.Background(), hostcall.Handlers(), abi.CallLog, abi.StdioCall|5); got != 0 {
		t.Fatalf("without a call state: %#x, want 0", got)
	}
	if got := serveHostCall(withCallState(context.Background(), st), hostcall.Handlers(), abi.CallLog, abi.StdioCall|5); got != 0 {
		t.Fatalf("off the transport: %#x, want 0", got)
	}
}

// TestStdioBuffers checks the transport's buffers on their own: stdin ends
// after its document, stdout discards when off and refuses past its bound,
// and a stdio host call takes the last bytes written.
func TestStdioBuffers(t *testing.T) {
	t.Parallel()
	var s stdio
	if s.begin(false, []byte("x"), DefaultLimits()) {
		t.Fatal("the transport is used by a guest that does not speak it")
	}
	if n, err := s.out.Write([]byte("printed")); n != 7 || err != nil || len(s.out.buf) != 0 {
		t.Fatalf("off: Write = %d, %v, kept %q", n, err, s.out.buf)
	}
	if !s.begin(true, []byte(`{"in":1}`), Limits{OutputBytes: 64, RequestBytes: 32}) {
		t.Fatal("the transport is not used")
	}
	buf := make([]byte, 3)
	var got []byte
	for {
		n, err := s.in.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	if string(got) != `{"in":1}` {
		t.Fatalf("stdin gave %q", got)
	}

	st := newCallState(abi.ExportApply, "", trust.Caller{}, Limits{OutputBytes: 64, RequestBytes: 32})
	st.HostCalls, st.stdio = true, &s
	ctx := withCallState(context.Background(), st)
	req := `{"level":"info","message":"m"}`
	if _, err := s.out.Write([]byte("stray output;" + req)); err != nil {
		t.Fatal(err)
	}
	r := serveStdioCall(ctx, st, hostcall.Handlers(), abi.CallLog, uint64(len(req)))
	if r&abi.StdioCall == 0 || string(s.in.data) != `{"ok":{}}` || int(r&^abi.StdioCall) != len(s.in.data) {
		t.Fatalf("answer %#x, stdin %q", r, s.in.data)
	}
	if len(s.out.buf) != 0 {
		t.Fatalf("stdout kept %q after the call", s.out.buf)
	}

	_, _ = s.out.Write([]byte("ab"))
	serveStdioCall(ctx, st, hostcall.Handlers(), abi.CallLog, 10)
	if !strings.Contains(string(s.in.data), "bad request block") {
		t.Fatalf("a length past what was written: %s", s.in.data)
	}
	serveStdioCall(ctx, st, hostcall.Handlers(), abi.CallLog, 33)
	if !strings.Contains(string(s.in.data), "request_bytes limit of 32") {
		t.Fatalf("a length past request_bytes: %s", s.in.data)
	}
	if _, err := s.out.Write(make([]byte, 65)); err == nil || !s.out.overflow {
		t.Fatal("stdout took more than its bound")
	}
	serveStdioCall(ctx, st, hostcall.Handlers(), abi.CallLog, 20)
	if !strings.Contains(string(s.in.data), abi.CodeTooLarge) {
		t.Fatalf("after an overflow: %s", s.in.data)
	}
}
