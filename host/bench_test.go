package host

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Run with: go test ./host/ -run XXX -bench . -benchtime 3x for the compile
// benchmarks (seconds each), and the default benchtime for the call ones.

// maxCompiles bounds -benchtime Nx for the compile benchmarks: each
// iteration takes about a second cold, so the -benchtime 2000x wanted by the
// call benchmarks would run for most of an hour.
const maxCompiles = 20

// skipManyCompiles skips a compile benchmark asked for more than
// maxCompiles iterations; run it alone with -benchtime 3x.
func skipManyCompiles(b *testing.B) {
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return
	}
	if n, ok := strings.CutSuffix(f.Value.String(), "x"); ok {
		if i, err := strconv.Atoi(n); err == nil && i > maxCompiles {
			b.Skipf("-benchtime %s would compile the plugin %d times; run this benchmark with -benchtime 3x", f.Value, i)
		}
	}
}

// BenchmarkCompileCold compiles the probe (a ~3.5 MB Go guest) and the
// Extism kernel with no cache at all.
func BenchmarkCompileCold(b *testing.B) {
	skipManyCompiles(b)
	ctx := context.Background()
	for b.Loop() {
		h, err := New(WithCacheDir(""))
		if err != nil {
			b.Fatal(err)
		}
		cp, err := h.compile(ctx, "probe", probeWasm, false)
		if err != nil {
			b.Fatal(err)
		}
		_ = cp.Close(ctx)
		_ = h.Close(ctx)
	}
}

// BenchmarkCompileCached loads the same from the persistent cache, as a
// later ccm process does.
func BenchmarkCompileCached(b *testing.B) {
	skipManyCompiles(b)
	ctx := context.Background()
	sharedHost(b) // warms the cache
	for b.Loop() {
		h, err := New(WithCacheDir(testCacheDir()))
		if err != nil {
			b.Fatal(err)
		}
		cp, err := h.compile(ctx, "probe", probeWasm, false)
		if err != nil {
			b.Fatal(err)
		}
		_ = cp.Close(ctx)
		_ = h.Close(ctx)
	}
}

// BenchmarkInstantiate creates a fresh instance and makes its first call
// (ccm_describe), which runs the Go guest's runtime initialisation: what a
// discarded instance costs the next call.
func BenchmarkInstantiate(b *testing.B) {
	ctx := context.Background()
	h := newProbeHost(b, Limits{})
	if _, err := h.Info(ctx, trust.Caller{}, "probe"); err != nil {
		b.Fatal(err)
	}
	p := h.plugins["probe"]
	for b.Loop() {
		p.mu.Lock()
		for len(p.live) > 0 {
			p.discard(ctx, p.live[0])
		}
		_, err := p.describe(ctx, trust.Caller{})
		p.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallTrivial is one ccm_validate_batch of one request.
func BenchmarkCallTrivial(b *testing.B) {
	ctx := context.Background()
	h := newProbeHost(b, Limits{})
	reqs := []abi.ValidateRequest{{Properties: map[string]any{"name": "x"}}}
	for b.Loop() {
		if _, err := h.Validate(ctx, trust.Caller{}, "probe", reqs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyOneHostCall is one ccm_apply making one ccm_fs_stat (with
// checksum) of a small file, through the full grant check.
func BenchmarkApplyOneHostCall(b *testing.B) {
	ctx := context.Background()
	h := newProbeHost(b, Limits{})
	dir := tempDir(b)
	file := filepath.Join(dir, "f")
	mustWrite(b, file, "content", 0o644)
	req := abi.Request{Type: "probe", Name: "f", Properties: map[string]any{"stat": file}}
	caller := trust.Caller{Grants: grantDir(b, dir)}
	for b.Loop() {
		res, err := h.Apply(ctx, caller, req)
		if err != nil || res.Error != "" {
			b.Fatal(err, res.Error)
		}
	}
}

// BenchmarkApplyNoHostCall is a ccm_apply that makes no host call, to
// separate the cost of the export call from that of the host call.
func BenchmarkApplyNoHostCall(b *testing.B) {
	ctx := context.Background()
	h := newProbeHost(b, Limits{})
	req := abi.Request{Type: "probe", Name: "f", Properties: map[string]any{"alloc": 0}}
	for b.Loop() {
		if _, err := h.Apply(ctx, trust.Caller{}, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyWrite64KiB is one ccm_apply writing a 64 KiB file from
// guest memory: the cost of moving bytes through the SDK and the kernel
// (large contents should go as a source file the host copies).
func BenchmarkApplyWrite64KiB(b *testing.B) {
	ctx := context.Background()
	h := newProbeHost(b, Limits{})
	dir := tempDir(b)
	req := abi.Request{Type: "probe", Name: "w", Properties: map[string]any{"write": filepath.Join(dir, "f"), "size": 64 << 10}}
	caller := trust.Caller{Grants: grantDir(b, dir)}
	b.SetBytes(64 << 10)
	for b.Loop() {
		res, err := h.Apply(ctx, caller, req)
		if err != nil || res.Error != "" {
			b.Fatal(err, res.Error)
		}
	}
}

// BenchmarkApplyOneHostCallKernel is BenchmarkApplyOneHostCall with the
// documents moved through Extism kernel blocks, as for a guest that does not
// speak the stdio transport.
func BenchmarkApplyOneHostCallKernel(b *testing.B) {
	ctx := context.Background()
	h := newProbeHost(b, Limits{})
	hideExport(b, h, abi.ExportStdio)
	dir := tempDir(b)
	file := filepath.Join(dir, "f")
	mustWrite(b, file, "content", 0o644)
	req := abi.Request{Type: "probe", Name: "f", Properties: map[string]any{"stat": file}}
	caller := trust.Caller{Grants: grantDir(b, dir)}
	for b.Loop() {
		res, err := h.Apply(ctx, caller, req)
		if err != nil || res.Error != "" {
			b.Fatal(err, res.Error)
		}
	}
}

// BenchmarkApplyBatch is one ccm_apply_batch of 64 resources, each making
// one ccm_fs_stat with checksum, over each transport; ns/resource is what a
// resource of a batch costs.
//
// "builtin" is stdio with the probe served as a built-in (WithBuiltins):
// no per-loop termination check (trusted.go).
func BenchmarkApplyBatch(b *testing.B) {
	for _, tr := range []string{"stdio", "kernel", "builtin"} {
		b.Run(tr, func(b *testing.B) {
			ctx := context.Background()
			var h *Host
			if tr == "builtin" {
				h = newBuiltinProbeHost(b)
			} else {
				h = newProbeHost(b, Limits{})
			}
			if tr == "kernel" {
				hideExport(b, h, abi.ExportStdio)
			}
			dir := tempDir(b)
			grants := grantDir(b, dir)
			const n = 64
			callers := make([]trust.Caller, n)
			reqs := make([]abi.Request, n)
			for i := range n {
				file := filepath.Join(dir, fmt.Sprint("f", i))
				mustWrite(b, file, fmt.Sprint("content ", i), 0o644)
				callers[i] = trust.Caller{Resource: "probe#" + file, Grants: grants}
				reqs[i] = abi.Request{Type: "probe", Name: file, Properties: map[string]any{"stat": file}}
			}
			if _, err := h.ApplyBatch(ctx, callers, reqs, false); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				res, err := h.ApplyBatch(ctx, callers, reqs, false)
				if err != nil || len(res) != n || res[n-1].Error != "" {
					b.Fatal(err, res)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/resource")
		})
	}
}

// newBuiltinProbeHost serves the probe as a built-in.
func newBuiltinProbeHost(b *testing.B) *Host {
	b.Helper()
	dir := b.TempDir()
	mustWrite(b, filepath.Join(dir, "probe.wasm"), string(probeWasm), 0o644)
	h, err := New(WithBuiltins(os.DirFS(dir)), WithCacheDir(testCacheDir()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// BenchmarkValidateBatch is one ccm_validate_batch of 2000 file-like
// property sets: almost all of it is the guest reading and writing JSON.
func BenchmarkValidateBatch(b *testing.B) {
	ctx := context.Background()
	h := newProbeHost(b, Limits{})
	const n = 2000
	reqs := make([]abi.ValidateRequest, n)
	for i := range reqs {
		reqs[i] = abi.ValidateRequest{Properties: map[string]any{
			"name": fmt.Sprintf("/srv/files/f%d.txt", i), "content": fmt.Sprint("file ", i),
			"ensure": "present", "owner": "root", "group": "root", "mode": "0644",
		}}
	}
	if _, err := h.Validate(ctx, trust.Caller{}, "probe", reqs); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := h.Validate(ctx, trust.Caller{}, "probe", reqs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/resource")
}

func BenchmarkExecTrue(b *testing.B) {
	h := sharedHost(b)
	caller := trust.Caller{Grants: trust.Chain{trust.All()}}
	req := abi.ExecRequest{Argv: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C"}}
	for b.Loop() {
		if _, err := h.Exec(context.Background(), caller, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScopeKey is what choosing a call's instance costs: the scope key
// of a caller with a typical vendor grant and limits, then the lookup among
// maxInstances live instances.
func BenchmarkScopeKey(b *testing.B) {
	caller := trust.Caller{
		Grants: trust.Chain{trust.All(), {FSRead: []string{"/srv/vendor/**", "/etc/hosts"}, FSWrite: []string{"/srv/vendor/data/**"}, Exec: []string{"/usr/bin/systemctl"}, Users: true}},
		Limits: trust.Limits{CallTimeout: 30 * time.Second, MemoryBytes: 64 << 20},
	}
	l := DefaultLimits()
	p := &plugin{}
	for i := range maxInstances {
		p.live = append(p.live, &instance{key: scopeKey{byte(i + 1)}})
	}
	for b.Loop() {
		k := keyOf(caller, l)
		for _, in := range p.live {
			if in.key == k {
				b.Fatal("found")
			}
		}
	}
}

// BenchmarkNewScopeInstance is the first call of a new scope on a loaded
// plugin: a fresh instance (the Go guest's runtime initialisation) and a
// trivial ccm_validate_batch. Each iteration is a scope of its own, so with
// maxInstances live it also closes the least recently used.
func BenchmarkNewScopeInstance(b *testing.B) {
	ctx := context.Background()
	h := newProbeHost(b, Limits{})
	reqs := []abi.ValidateRequest{{Properties: map[string]any{"name": "x"}}}
	var i int
	for b.Loop() {
		i++
		caller := trust.Caller{Grants: trust.Chain{{FSRead: []string{fmt.Sprintf("/scope/%d/**", i)}}}}
		if _, err := h.Validate(ctx, caller, "probe", reqs); err != nil {
			b.Fatal(err)
		}
	}
}
