package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm/runtime"
)

// Budgets of host-side template evaluation. Templates run in the ccm
// process, outside any plugin sandbox, so a manifest (a vendor's, in a
// confined scope) could otherwise make the host build gigabytes: a string
// concatenated with itself thirty times is a gigabyte. The operations that
// can grow a value faster than its source (string +, repeat, replace, join,
// toJSON, rendering a list, Jet's output) are sized before they are built.
const (
	// MaxValueBytes is the largest string one template operation may build.
	MaxValueBytes = 16 << 20
	// MaxEvalBytes is how much one evaluation (one expression, one Jet
	// render) may build in all.
	MaxEvalBytes = 64 << 20
	// MaxJetIterations is how many range iterations one Jet render may run,
	// nested loops counted together.
	MaxJetIterations = 1_000_000
)

// ErrBudget means a template went over one of the budgets above.
var ErrBudget = errors.New("template budget exceeded")

// budget counts what one evaluation has built. Evaluations are single
// goroutine; a budget is never shared between two.
type budget struct {
	used       int64
	iterations int64
	enters     int64     // Jet block and template entries
	frames     []uintptr // runtime.Callers' buffer for Jet's depth check
}

// grow accounts for n more bytes built by what, failing before they are.
func (b *budget) grow(what string, n int64) error {
	if n > MaxValueBytes {
		return fmt.Errorf("%w: %s would build %s, over the %d MiB one template value may hold (max_value_bytes)", ErrBudget, what, size(n), MaxValueBytes>>20)
	}
	if b.used+n > MaxEvalBytes {
		return fmt.Errorf("%w: %s would bring what this template built to %s, over the %d MiB one evaluation may build (max_eval_bytes)", ErrBudget, what, size(b.used+n), MaxEvalBytes>>20)
	}
	b.used += n
	return nil
}

// iterate counts one loop iteration.
func (b *budget) iterate() error {
	b.iterations++
	if b.iterations > MaxJetIterations {
		return fmt.Errorf("%w: over %d loop iterations in one Jet template (max_jet_iterations)", ErrBudget, MaxJetIterations)
	}
	return nil
}

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// add is + with strings sized first; other operands are expr's own +.
func (b *budget) add(x, y any) (any, error) {
	xs, xok := x.(string)
	ys, yok := y.(string)
	if xok && yok {
		if err := b.grow("string concatenation (+)", int64(len(xs))+int64(len(ys))); err != nil {
			return nil, err
		}
		return xs + ys, nil
	}
	return safeAdd(x, y)
}

// safeAdd is expr's +, its panic on mismatched operands turned into an error.
func safeAdd(x, y any) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return runtime.Add(x, y), nil
}

// repeat is repeat(s, n).
func (b *budget) repeat(s string, n int) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("repeat: the count must not be negative, got %d", n)
	}
	if len(s) > 0 && n > MaxValueBytes/len(s)+1 {
		return "", b.grow("repeat", MaxValueBytes+1)
	}
	if err := b.grow("repeat", int64(len(s))*int64(n)); err != nil {
		return "", err
	}
	return strings.Repeat(s, n), nil
}

// replace is strings.Replace (n < 0: every occurrence).
func (b *budget) replace(s, old, new string, n int) (string, error) {
	count := strings.Count(s, old)
	if n >= 0 && n < count {
		count = n
	}
	if err := b.grow("replace", int64(len(s))+int64(count)*(int64(len(new))-int64(len(old)))); err != nil {
		return "", err
	}
	return strings.Replace(s, old, new, n), nil
}

// join is join(list, sep).
func (b *budget) join(items []string, sep string) (string, error) {
	var n int64
	for _, s := range items {
		n += int64(len(s)) + int64(len(sep))
	}
	if err := b.grow("join", n); err != nil {
		return "", err
	}
	return strings.Join(items, sep), nil
}

// toJSON encodes v within the budget. encoding/json builds the whole
// document before it writes any of it, so v's size is estimated first (a
// lower bound: its strings, keys and punctuation) and the encoding is
// refused when that is already over.
func (b *budget) toJSON(what string, v any, indent string) (string, error) {
	if n := jsonSize(v, 0, len(indent) > 0); n > MaxValueBytes || b.used+n > MaxEvalBytes {
		return "", b.grow(what, n)
	}
	w := &boundedWriter{b: b, what: what}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		if w.err != nil {
			return "", w.err
		}
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return strings.TrimSuffix(w.sb.String(), "\n"), nil
}

// boundedWriter is a strings.Builder that refuses to grow past the budget
// (Jet's output, JSON encodings).
type boundedWriter struct {
	sb   strings.Builder
	b    *budget
	what string
	err  error
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if int64(w.sb.Len())+int64(len(p)) > MaxValueBytes {
		w.err = w.b.grow(w.what, int64(w.sb.Len())+int64(len(p)))
		if w.err == nil {
			w.err = fmt.Errorf("BUG: %s over max_value_bytes passed the budget", w.what)
		}
		return 0, w.err
	}
	if err := w.b.grow(w.what, int64(len(p))); err != nil {
		w.err = err
		return 0, err
	}
	return w.sb.WriteString(string(p))
}

var _ io.Writer = (*boundedWriter)(nil)

// The expr side: + is patched into a call of ccmAdd, and the builtins that
// can build large strings are replaced by budgeted ones of the same name
// (fields of exprEnv and hieraEnv, set per evaluation in withBudget).
const exprAdd = "ccmAdd"

// budgetedBuiltins are the expr builtins replaced by the env's fields.
var budgetedBuiltins = []string{"repeat", "replace", "join", "toJSON"}

// budgetFns are the budgeted functions one evaluation sees.
type budgetFns struct {
	Add     fn `expr:"ccmAdd"`
	Repeat  fn `expr:"repeat"`
	Replace fn `expr:"replace"`
	Join    fn `expr:"join"`
	ToJSON  fn `expr:"toJSON"`
}

// exprFns binds the budgeted functions to b.
func (b *budget) exprFns() budgetFns {
	return budgetFns{
		Add: func(args ...any) (any, error) {
			if len(args) != 2 {
				return nil, fmt.Errorf("BUG: %s with %d arguments", exprAdd, len(args))
			}
			return b.add(args[0], args[1])
		},
		Repeat: func(args ...any) (any, error) {
			if len(args) != 2 {
				return nil, fmt.Errorf("repeat takes a string and a count, got %d arguments", len(args))
			}
			s, ok := args[0].(string)
			if !ok {
				return nil, fmt.Errorf("repeat: the first argument must be a string, not %T", args[0])
			}
			n, ok := toInt(args[1])
			if !ok {
				return nil, fmt.Errorf("repeat: the count must be an integer, not %T", args[1])
			}
			return b.repeat(s, n)
		},
		Replace: func(args ...any) (any, error) {
			if len(args) != 3 && len(args) != 4 {
				return nil, fmt.Errorf("replace takes a string, the old and the new text and optionally a count, got %d arguments", len(args))
			}
			var strs [3]string
			for i := range strs {
				s, ok := args[i].(string)
				if !ok {
					return nil, fmt.Errorf("replace: argument %d must be a string, not %T", i+1, args[i])
				}
				strs[i] = s
			}
			n := -1
			if len(args) == 4 {
				var ok bool
				if n, ok = toInt(args[3]); !ok {
					return nil, fmt.Errorf("replace: the count must be an integer, not %T", args[3])
				}
			}
			return b.replace(strs[0], strs[1], strs[2], n)
		},
		Join: func(args ...any) (any, error) {
			if len(args) != 1 && len(args) != 2 {
				return nil, fmt.Errorf("join takes a list and optionally a separator, got %d arguments", len(args))
			}
			sep := ""
			if len(args) == 2 {
				s, ok := args[1].(string)
				if !ok {
					return nil, fmt.Errorf("join: the separator must be a string, not %T", args[1])
				}
				sep = s
			}
			var items []string
			switch l := args[0].(type) {
			case []string:
				items = l
			case []any:
				items = make([]string, len(l))
				for i, e := range l {
					s, ok := e.(string)
					if !ok {
						return nil, fmt.Errorf("join: item %d is %T, not a string", i, e)
					}
					items[i] = s
				}
			default:
				return nil, fmt.Errorf("join: the first argument must be a list of strings, not %T", args[0])
			}
			return b.join(items, sep)
		},
		ToJSON: func(args ...any) (any, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("toJSON takes one argument, got %d", len(args))
			}
			return b.toJSON("toJSON", args[0], "  ")
		},
	}
}

func toInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	}
	rv := reflect.ValueOf(v)
	if rv.CanInt() {
		return int(rv.Int()), true
	}
	return 0, false
}

// concatPatcher turns every + whose operands may be strings into a call of
// ccmAdd, which sizes the result first. A + of two numbers stays as it is.
type concatPatcher struct{}

func (concatPatcher) Visit(node *ast.Node) {
	b, ok := (*node).(*ast.BinaryNode)
	if !ok || b.Operator != "+" || (numeric(b.Left.Type()) && numeric(b.Right.Type())) {
		return
	}
	ast.Patch(node, &ast.CallNode{
		Callee:    &ast.IdentifierNode{Value: exprAdd},
		Arguments: []ast.Node{b.Left, b.Right},
	})
}

func numeric(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// renderSized is render for a piece of a string that already holds have
// bytes: the whole may not pass MaxValueBytes, and a list or map is
// encoded within that bound rather than in full first.
func renderSized(v any, have int) (string, error) {
	var t string
	switch v.(type) {
	case []any, map[string]any, map[string]string, []string:
		var err error
		if t, err = (&budget{}).toJSON("rendering a list or map into a string", v, ""); err != nil {
			return "", err
		}
		if strings.ContainsAny(t, "<>&") {
			// render's json.Marshal escapes these; its output is the
			// reference.
			t = render(v)
		}
	default:
		t = render(v)
	}
	if n := int64(have) + int64(len(t)); n > MaxValueBytes {
		return "", fmt.Errorf("%w: a template string would grow to %s, over the %d MiB one template value may hold (max_value_bytes)", ErrBudget, size(n), MaxValueBytes>>20)
	}
	return t, nil
}

// jsonSize is a lower bound of v's JSON encoding, at nesting depth; it
// stops counting once past MaxEvalBytes.
func jsonSize(v any, depth int, indented bool) int64 {
	var n int64
	pad := int64(0)
	if indented {
		pad = int64(2*depth + 3)
	}
	switch t := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(t)) + 2
	case []string:
		for _, e := range t {
			if n += int64(len(e)) + 3 + pad; n > MaxEvalBytes {
				break
			}
		}
		return n + 2
	case []any:
		for _, e := range t {
			if n += jsonSize(e, depth+1, indented) + 1 + pad; n > MaxEvalBytes {
				break
			}
		}
		return n + 2
	case map[string]any:
		for k, e := range t {
			if n += int64(len(k)) + 4 + pad + jsonSize(e, depth+1, indented); n > MaxEvalBytes {
				break
			}
		}
		return n + 2
	case map[string]string:
		for k, e := range t {
			if n += int64(len(k)+len(e)) + 6 + pad; n > MaxEvalBytes {
				break
			}
		}
		return n + 2
	}
	return 1
}

// evalState is what one expression evaluation runs against: a budget, the
// functions bound to it, and the env copy that carries them. Pooled, since
// building the closures for every evaluation doubled the allocations of
// an expansion; nothing an evaluation returns refers to it.
type evalState struct {
	b     budget
	fns   budgetFns
	env   exprEnv
	hiera hieraEnv
}

var evalStates = sync.Pool{New: func() any {
	st := &evalState{}
	st.fns = st.b.exprFns()
	return st
}}

func getEvalState() *evalState {
	st := evalStates.Get().(*evalState)
	st.b = budget{}
	return st
}

// putEvalState drops st's references to the Expander's data before
// pooling it.
func putEvalState(st *evalState) {
	st.env = exprEnv{}
	st.hiera = hieraEnv{}
	evalStates.Put(st)
}
