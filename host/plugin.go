package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/ccm-dev/ccm/host/hostcall"
	"github.com/ccm-dev/ccm/runtime/trust"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// ErrLimit is wrapped by the error of a call that a Limits value stopped
// (call_timeout, memory_mb, output_bytes).
var ErrLimit = errors.New("plugin limit exceeded")

// plugin is one resource type: its compiled module, its description, and
// its live instances, one per trust scope (see scopeKey). mu is held for a
// whole call, since an instance is not safe for concurrent calls.
type plugin struct {
	host *Host
	typ  string
	// id is typ for the root scope's plugins, type@sum for a registered
	// file (set once its description is known).
	id string
	// origin is where the module came from: "built-in" or a file path.
	origin string
	// sum is the sha256 (hex) of the module's bytes, known once read.
	sum string
	// registered marks a plugin loaded from a file by Register; wasm holds
	// its bytes until they are compiled. A root-scope plugin's bytes come
	// from the host's sources.
	registered bool
	wasm       []byte
	// trusted marks a module given with WithBuiltins: compiled without the
	// per-loop termination check, watched instead (trusted.go).
	trusted bool

	mu sync.Mutex
	// announced is how many resources of this plugin the Host's runs
	// announced (Preload); interpreted marks a built-in loaded with
	// wazero's interpreter because it was not compiled yet (cold.go).
	announced   int
	interpreted bool
	compiled    *extism.CompiledPlugin
	info        *abi.PluginInfo
	exports     map[string]bool // the module's exported functions
	// live are the instances, at most maxInstances, one per scope key;
	// cur is the one serving (or that last served) a call.
	live   []*instance
	cur    *instance
	tick   uint64 // a clock for choosing the least recently used instance
	logTo  func(level, message string)
	closed bool
}

// maxInstances is how many live instances one plugin keeps, one per trust
// scope; a call for another scope closes the least recently used.
const maxInstances = 4

// instance is one instantiation of a plugin's module and what belongs to it.
// It serves the calls of one trust scope only (its key), so linear memory
// and globals holding what one scope's grant let the guest read never reach
// a call made under another grant.
type instance struct {
	key    scopeKey
	inst   *extism.Plugin
	stderr *headBuffer // stderr, for crash messages
	stdio  *stdio      // stdin and stdout
	kernel kernelCache // the kernel functions
	mem    memoryCap   // the memories and the call's cap
	used   uint64      // plugin.tick when it last served a call
	serial uint64      // unique in the process, for handles (handles.go)
	kept   int         // handles it answered that were not sent back yet
	ended  atomic.Bool // set when a module of it closes (the guest's proc_exit)
}

// load compiles the module and runs ccm_describe, once, for caller (under
// its limits, in an instance of its scope); a failure is not remembered, so
// a later call retries.
func (p *plugin) load(ctx context.Context, caller trust.Caller) (abi.PluginInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadLocked(ctx, caller); err != nil {
		return abi.PluginInfo{}, err
	}
	return *p.info, nil
}

func (p *plugin) loadLocked(ctx context.Context, caller trust.Caller) error {
	if p.closed {
		return ErrClosed
	}
	if p.compiled == nil {
		wasm := p.wasm
		if wasm == nil {
			var err error
			if wasm, p.origin, p.trusted, err = p.host.module(p.typ); err != nil {
				return err
			}
			p.sum = p.host.sumOf(p.typ, wasm, p.trusted)
		}
		var err error
		if p.interpretCold() {
			p.compiled, err = p.host.newInterpreted(ctx, p.typ, wasm)
			p.interpreted = err == nil
		} else {
			p.compiled, err = p.host.compileMarked(ctx, p.typ, wasm, p.trusted, p.sum)
		}
		if err != nil {
			return err
		}
		if p.trusted {
			p.host.released(p.typ)
		}
		p.wasm = nil
	}
	if p.info == nil {
		info, err := p.describe(ctx, caller)
		if err != nil {
			return err
		}
		p.info = &info
	}
	return nil
}

func (p *plugin) describe(ctx context.Context, caller trust.Caller) (abi.PluginInfo, error) {
	st := newCallState(abi.ExportDescribe, p.typ, caller, p.host.limits.lowered(caller.Limits))
	out, err := p.callLocked(ctx, st, abi.ExportDescribe, nil)
	if err != nil {
		return abi.PluginInfo{}, err
	}
	var info abi.PluginInfo
	if err := json.Unmarshal(out, &info); err != nil {
		return abi.PluginInfo{}, fmt.Errorf("plugin for type %q: decode %s output: %w", p.typ, abi.ExportDescribe, err)
	}
	if !slices.Contains(SupportedABIs, info.ABI) {
		return abi.PluginInfo{}, abiMismatch(p.typ, info.ABI)
	}
	if len(info.Capabilities.Env) > 0 {
		return abi.PluginInfo{}, fmt.Errorf("plugin for type %q requests env in its capabilities; env is a grant key only, given by the operator (docs/security.md, \"Exec\")", p.typ)
	}
	switch {
	case p.registered:
		// A registered file: its type is what it describes (Register checks it).
	case info.Type != p.typ && p.origin != builtinOrigin:
		return abi.PluginInfo{}, fmt.Errorf("operator plugin %s describes type %q; name the file after the type it provides (%s.wasm)", p.origin, info.Type, info.Type)
	case info.Type != p.typ:
		return abi.PluginInfo{}, fmt.Errorf("plugin for type %q describes type %q; a plugin module must be registered under the type it provides", p.typ, info.Type)
	}
	return info, nil
}

func abiMismatch(typ string, got int) error {
	newest := slices.Max(SupportedABIs)
	if got > newest {
		return fmt.Errorf("plugin for type %q speaks plugin abi %d, this ccm speaks abi %v; upgrade ccm or use a plugin built for abi %d", typ, got, SupportedABIs, newest)
	}
	return fmt.Errorf("plugin for type %q speaks plugin abi %d, this ccm speaks abi %v; rebuild the plugin against a newer sdk/", typ, got, SupportedABIs)
}

// call runs export with input for st, loading the plugin first if needed.
func (p *plugin) call(ctx context.Context, st *callState, export string, input []byte) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadLocked(ctx, st.Caller); err != nil {
		return nil, err
	}
	return p.callLocked(ctx, st, export, input)
}

// hasExport reports whether the module exports export (optional exports
// such as ccm_validate_batch).
func (p *plugin) hasExport(ctx context.Context, caller trust.Caller, export string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.loadLocked(ctx, caller); err != nil {
		return false, err
	}
	return p.exports[export], nil
}

// callLocked makes one Extism call under the call deadline. Any failure
// discards the instance: after a trap, a timeout or even a guest error the
// instance's state is not trusted, and the next call gets a fresh one.
//
// An instance that ended itself after its last call returned (a guest that
// set its output and then called proc_exit) is replaced before this call: its
// modules' close notifier marked it ended.
func (p *plugin) callLocked(ctx context.Context, st *callState, export string, input []byte) ([]byte, error) {
	// A scope's memory_mb below the host's limit caps this call's memory
	// growth; an instance already bigger than that starts afresh.
	var memCap uint64
	if st.limits.MemoryPages < p.host.limits.MemoryPages {
		memCap = uint64(st.limits.MemoryPages) << 16
	}
	in, err := p.instanceFor(ctx, keyOf(st.Caller, p.host.limits))
	if err != nil {
		return nil, err
	}
	if in.used != 0 && (in.ended.Load() || memCap > 0 && in.mem.largest() > memCap) {
		p.discard(ctx, in)
		if in, err = p.instanceFor(ctx, in.key); err != nil {
			return nil, err
		}
	}
	p.tick++
	in.used = p.tick
	p.cur = in
	st.served = in.serial
	if st.encode != nil {
		// Handles reach only the instance that made them, and only for
		// the exports that take them.
		var serial uint64
		if p.info != nil && p.info.Handles && (export == abi.ExportApply || export == abi.ExportApplyBatch) {
			serial = in.serial
		}
		var sent int
		if input, sent, err = st.encode(serial); err != nil {
			return nil, fmt.Errorf("plugin for type %q: encode %s input: %w", p.typ, export, err)
		}
		in.kept -= sent
	}
	in.mem.limit.Store(memCap)
	dl := newDeadline(ctx, st.limits.CallTimeout)
	defer dl.stop()
	st.deadline = dl
	st.kernel = &in.kernel
	st.Dirs = &hostcall.DirSyncs{}
	defer st.Dirs.SyncAll()
	st.Pending = &hostcall.Pending{}
	p.logTo = st.Log
	defer func() { p.logTo = nil }()
	in.stderr.Reset()
	if in.stdio.begin(p.exports[abi.ExportStdio], input, st.limits) {
		st.stdio = in.stdio
		input = nil // the guest reads it from stdin
	}

	if p.trusted {
		defer p.host.watch(dl, p.typ, export)()
	}
	rc, out, err := in.inst.CallWithContext(withCallState(dl.ctx, st), export, input)
	// Every write of the call is durable (fsynced, renamed; its directory
	// synced by the deferred SyncAll) before its result is accepted; one
	// that could not be completed fails the whole call.
	if serr := st.Pending.Settle(&st.State); serr != nil && err == nil {
		return nil, fmt.Errorf("plugin for type %q: %s: %w; no result of this call is reported as applied, run it again", p.typ, export, serr)
	}
	if err == nil && rc != 0 {
		err = fmt.Errorf("returned %d without an error message", rc)
	}
	if le := st.hostCallsExceeded(); le != nil && err == nil {
		err = le // the guest returned before it was stopped
	}
	if err == nil && p.trusted && dl.ctx.Err() != nil {
		// A built-in has no per-loop check: one whose deadline passed (in
		// an exec the deadline killed, say) returns on its own. The call
		// fails as a checked plugin's would have, naming the limit.
		err = context.Cause(dl.ctx)
	}
	if err == nil && st.stdio != nil && len(out) == 0 {
		if in.stdio.out.overflow {
			p.discard(ctx, in)
			return nil, fmt.Errorf("plugin for type %q: %s output %w", p.typ, export,
				&limitError{limit: "output_bytes", value: fmt.Sprint(st.limits.OutputBytes)})
		}
		out = in.stdio.out.take()
	}
	if err != nil {
		p.discard(ctx, in)
		return nil, p.callError(ctx, dl, st, in, export, err)
	}
	if int64(len(out)) > st.limits.OutputBytes {
		p.discard(ctx, in)
		return nil, fmt.Errorf("plugin for type %q: %s output of %d bytes %w", p.typ, export, len(out),
			&limitError{limit: "output_bytes", value: fmt.Sprint(st.limits.OutputBytes)})
	}
	if len(out) == 0 {
		// Every export answers with a JSON document. None means the guest
		// exited mid-call (proc_exit 0 ends a call without an error) or
		// pointed its output outside memory; either way the instance is done.
		p.discard(ctx, in)
		return nil, fmt.Errorf("plugin for type %q: %s returned no output document (did the plugin exit, or set its output outside its memory?); the instance was discarded", p.typ, export)
	}
	return out, nil
}

// callError says why a call failed, naming the limit when one stopped it.
func (p *plugin) callError(ctx context.Context, dl *deadline, st *callState, in *instance, export string, err error) error {
	prefix := fmt.Sprintf("plugin for type %q: %s", p.typ, export)
	var le *limitError
	if errors.As(context.Cause(dl.ctx), &le) {
		return fmt.Errorf("%s: %w; the instance was discarded", prefix, le)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", prefix, context.Cause(ctx))
	}
	msg := firstLine(err.Error())
	if crash := firstLine(in.stderr.String()); crash != "" {
		msg += ": " + crash
	}
	if strings.Contains(in.stderr.String(), "out of memory") {
		// One name for the limit whoever set it: memory_mb is what an
		// operator can write in an apply's limits.
		pages := min(st.limits.MemoryPages, p.host.limits.MemoryPages)
		return fmt.Errorf("%s: %s: %w", prefix, msg, &limitError{limit: "memory_mb", value: fmt.Sprintf("%d MiB", pages/16)})
	}
	return fmt.Errorf("%s: %s", prefix, msg)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// instanceFor returns the live instance serving key, creating one if there
// is none; when maxInstances are live already, the least recently used one
// is closed first. An instance is created with used == 0.
func (p *plugin) instanceFor(ctx context.Context, key scopeKey) (*instance, error) {
	for _, in := range p.live {
		if in.key == key {
			return in, nil
		}
	}
	if len(p.live) >= maxInstances {
		lru := p.live[0]
		for _, in := range p.live[1:] {
			if in.used < lru.used {
				lru = in
			}
		}
		p.discard(ctx, lru)
	}
	in := &instance{key: key, stderr: &headBuffer{max: 4 << 10}, stdio: &stdio{}, serial: instanceSerials.Add(1)}
	// No preopened directories, environment or arguments: the guest reaches
	// the system only through host calls. Clocks and randomness are real
	// because the Go runtime wants them and they grant nothing. Stdin and
	// stdout carry documents for a guest that speaks the stdio transport and
	// are empty and discarded for any other. Stderr is kept (bounded) only
	// to explain a crash.
	mc := wazero.NewModuleConfig().
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().
		WithRandSource(rand.Reader).
		WithStdin(&in.stdio.in).WithStdout(&in.stdio.out).
		WithStderr(in.stderr)
	// Both the guest's and the kernel's memories come from in.mem. A module
	// of the instance that closes (the guest's proc_exit) marks it ended.
	ictx := experimental.WithCloseNotifier(experimental.WithMemoryAllocator(ctx, in.mem.allocator()),
		experimental.CloseNotifyFunc(func(context.Context, uint32) { in.ended.Store(true) }))
	inst, err := p.compiled.Instance(ictx, extism.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, fmt.Errorf("instantiate plugin for type %q: %w", p.typ, err)
	}
	inst.SetLogger(p.extismLog)
	in.inst = inst
	if p.exports == nil {
		// Listed once from the definitions: Extism's FunctionExists builds a
		// callable function (with its own stack) on every query.
		p.exports = make(map[string]bool)
		for name := range inst.Module().ExportedFunctions() {
			p.exports[name] = true
		}
	}
	p.live = append(p.live, in)
	return in, nil
}

// discard closes an instance; the next call for its scope instantiates a
// new one.
func (p *plugin) discard(ctx context.Context, in *instance) {
	i := slices.Index(p.live, in)
	if i < 0 {
		return
	}
	p.live = slices.Delete(p.live, i, i+1)
	if p.cur == in {
		p.cur = nil
	}
	_ = in.inst.Close(context.WithoutCancel(ctx))
}

func (p *plugin) close(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for len(p.live) > 0 {
		p.discard(ctx, p.live[0])
	}
	if p.compiled == nil {
		return nil
	}
	err := p.compiled.Close(ctx)
	p.compiled = nil
	if err != nil {
		return fmt.Errorf("close plugin for type %q: %w", p.typ, err)
	}
	return nil
}

// headBuffer keeps the first max bytes written to it: the start of a Go
// crash report says what happened; the goroutine dump after it does not.
type headBuffer struct {
	max int
	buf bytes.Buffer
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *headBuffer) String() string { return b.buf.String() }
func (b *headBuffer) Reset()         { b.buf.Reset() }
