package template

import (
	"errors"
	"fmt"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// cacheLimit bounds each cache. A run has far fewer distinct strings; the
// bound only matters for a long-lived process fed endless new sources,
// where dropping the cache is cheaper than tracking use.
const cacheLimit = 4096

// memo is a bounded, concurrency-safe map from source text to a value
// derived from it alone.
type memo[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

func (c *memo[K, V]) get(k K) (V, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *memo[K, V]) put(k K, v V) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheLimit {
		c.m = make(map[K]V, 64)
	}
	c.m[k] = v
	c.mu.Unlock()
}

type programKey struct {
	src     string
	hiera   bool
	lenient bool // Hiera order entries: a missing key gives nil
}

// The package's only global state: memos of pure functions of the source
// text (scanning and compiling), safe to share because programs are
// compiled against the env types and get the values at run time.
var (
	programs  memo[programKey, *vm.Program]
	templates memo[string, *parsed]
	machines  = sync.Pool{New: func() any { return new(vm.VM) }}
)

// parsed is a scanned template string.
type parsed struct {
	segs   []segment
	single string // the expression when the string is exactly one
	isOne  bool
}

// parse scans s, once per distinct string.
func parse(s string) (*parsed, error) {
	if p, ok := templates.get(s); ok {
		return p, nil
	}
	segs, err := scan(s)
	if err != nil {
		return nil, err
	}
	p := &parsed{segs: segs}
	p.single, p.isOne = single(segs)
	templates.put(s, p)
	return p, nil
}

// compile returns the program for src, compiling it on first use.
func compile(src string, hiera, lenient bool) (*vm.Program, error) {
	key := programKey{src: src, hiera: hiera, lenient: lenient}
	if p, ok := programs.get(key); ok {
		return p, nil
	}
	p, err := compileNow(src, hiera, lenient)
	if err != nil {
		return nil, err
	}
	programs.put(key, p)
	return p, nil
}

func compileNow(src string, hiera, lenient bool) (p *vm.Program, err error) {
	// expr's parser and checker do not promise to never panic on hostile
	// input; a manifest must not be able to crash the run.
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("expression %q: the Expr compiler failed: %v", clip(src), r)
		}
	}()
	var env any = &exprEnv{}
	if hiera {
		env = &hieraEnv{}
	}
	opts := []expr.Option{expr.Env(env), expr.Patch(concatPatcher{})}
	for _, name := range budgetedBuiltins {
		opts = append(opts, expr.DisableBuiltin(name))
	}
	if !lenient {
		// A missing key of Facts, Data or Environ is an error, not nil
		// (see strict.go); ?. and ?? opt out.
		marks := map[*ast.MemberNode]bool{}
		opts = append(opts, expr.Patch(&lenientMarker{marks}), expr.Patch(&strictPatcher{marks}), expr.Function(fetchName, fetchFn))
	}
	p, err = expr.Compile(src, opts...)
	if err != nil {
		return nil, exprError(src, err)
	}
	return p, nil
}

// run evaluates p against env on a pooled VM (a VM resets itself at the
// start of each run; reusing it saves its allocations).
func run(p *vm.Program, src string, env any) (out any, err error) {
	m := machines.Get().(*vm.VM)
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("expression %q: the Expr evaluator failed: %v", clip(src), r)
			return
		}
		machines.Put(m)
	}()
	out, err = m.Run(p, env)
	if err != nil {
		return nil, exprError(src, err)
	}
	return out, nil
}

// exprError flattens expr's multi-line error (with a source snippet) into
// one line naming the expression and the column; errors returned by our
// functions stay reachable through Unwrap.
func exprError(src string, err error) error {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return fmt.Errorf("expression %q: %w", clip(src), err)
	}
	if fe.Prev != nil {
		return fmt.Errorf("expression %q: %w", clip(src), fe.Prev)
	}
	return fmt.Errorf("expression %q: %s (column %d)", clip(src), fe.Message, fe.Column+1)
}
