package template

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm/runtime"
)

// ErrMissing means an expression read a key of Facts, Data or Environ that
// does not exist. A key that exists with a null value is not missing.
var ErrMissing = errors.New("missing key")

// fetchName is the function the strict patch calls in place of a member
// access on Facts, Data or Environ. The name cannot clash with a data key:
// it is only reachable as a bare identifier.
const fetchName = "__ccm_fetch"

// roots are the variables whose keys must exist, with the lookup() root
// each one corresponds to.
var roots = map[string]string{"Facts": "facts", "Data": "data", "Environ": "environ"}

// lenientMarker is the first of the two compile passes: it records the
// member accesses that may miss, namely every step of a chain written
// with ?. anywhere, and the chain on the left of ??, and makes each of
// them optional (?.), so that a missing step anywhere in such a chain
// gives nil rather than expr's "cannot fetch x from <nil>".
type lenientMarker struct{ lenient map[*ast.MemberNode]bool }

func (m *lenientMarker) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.ChainNode:
		m.spine(n.Node)
	case *ast.BinaryNode:
		if n.Operator != "??" {
			return
		}
		// In a ?? b ?? c, parsed (a ?? b) ?? c, every operand but the
		// last is a fallback that may be missing.
		m.optional(&n.Left)
		for cur := n.Left; ; {
			inner, ok := cur.(*ast.BinaryNode)
			if !ok || inner.Operator != "??" {
				break
			}
			m.optional(&inner.Right)
			cur = inner.Left
		}
	}
}

// optional makes the member chain at *node lenient.
func (m *lenientMarker) optional(node *ast.Node) {
	if _, ok := (*node).(*ast.MemberNode); ok {
		// expr short-circuits optional steps to the end of the
		// enclosing chain node.
		*node = &ast.ChainNode{Node: *node}
	}
	if c, ok := (*node).(*ast.ChainNode); ok {
		m.spine(c.Node)
	}
}

// spine marks node and every member access it is built on.
func (m *lenientMarker) spine(node ast.Node) {
	for {
		switch n := node.(type) {
		case *ast.MemberNode:
			m.lenient[n] = true
			n.Optional = !n.Method
			node = n.Node
		case *ast.ChainNode:
			node = n.Node
		default:
			return
		}
	}
}

// strictPatcher is the second pass: each member access on Facts, Data or
// Environ (directly or through such an access) that the marker did not
// excuse becomes __ccm_fetch(base, key, text, lookupPath), which fails on
// a missing key instead of giving nil.
type strictPatcher struct{ lenient map[*ast.MemberNode]bool }

func (p *strictPatcher) Visit(node *ast.Node) {
	n, ok := (*node).(*ast.MemberNode)
	if !ok || n.Method || n.Optional || p.lenient[n] {
		return
	}
	base, path, ok := strictBase(n.Node)
	if !ok {
		return
	}
	text := base + "[" + n.Property.String() + "]"
	if s, ok := n.Property.(*ast.StringNode); ok {
		text = base + "." + s.Value
		if path != "" {
			path += "." + s.Value
		}
	} else {
		path = ""
	}
	call := &ast.CallNode{
		Callee: &ast.IdentifierNode{Value: fetchName},
		Arguments: []ast.Node{
			n.Node, n.Property,
			&ast.StringNode{Value: text},
			&ast.StringNode{Value: path},
		},
	}
	ast.Patch(node, call)
}

// strictBase reports whether node is a strict root (Facts, Data, Environ)
// or an already patched access on one, with its source text and its
// lookup() path ("" when a step is computed).
func strictBase(node ast.Node) (text, path string, ok bool) {
	switch n := node.(type) {
	case *ast.IdentifierNode:
		if p, ok := roots[n.Value]; ok {
			return n.Value, p, true
		}
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == fetchName && len(n.Arguments) == 4 {
			t, _ := n.Arguments[2].(*ast.StringNode)
			p, _ := n.Arguments[3].(*ast.StringNode)
			if t != nil && p != nil {
				return t.Value, p.Value, true
			}
		}
	}
	return "", "", false
}

// fetchFn is __ccm_fetch(base, key, text, path): base[key], failing when
// base is a map without key. It is an expr.Function (called directly, not
// through reflection like the env's function fields) and depends on
// nothing but its arguments, so compiled programs stay shareable.
func fetchFn(args ...any) (any, error) {
	if len(args) != 4 {
		return nil, fmt.Errorf("BUG: %s called with %d arguments", fetchName, len(args))
	}
	text, _ := args[2].(string)
	path, _ := args[3].(string)
	return fetch(args[0], args[1], text, path, false)
}

// fetch is base[key] where base was reached by text; inJet picks the
// lenient spelling the error suggests.
func fetch(base, key any, text, path string, inJet bool) (any, error) {
	switch m := base.(type) {
	case map[string]any:
		if k, ok := key.(string); ok {
			if v, found := m[k]; found {
				return v, nil
			}
			return nil, missing(text, k, path, keysOf(m), inJet)
		}
	case map[string]string:
		if k, ok := key.(string); ok {
			if v, found := m[k]; found {
				return v, nil
			}
			return nil, missing(text, k, path, nil, inJet)
		}
	case nil:
		parent := parentOf(text)
		return nil, fmt.Errorf("%w; give it a value or write %s", errMissing{msg: fmt.Sprintf("%s is null, so it has no key %v", parent, key)}, suggestion(text, path, inJet))
	}
	return runtime.Fetch(base, key), nil
}

// parentOf is the text of the value an access text reads from.
func parentOf(text string) string {
	if i := strings.LastIndexAny(text, ".["); i > 0 {
		return text[:i]
	}
	return text
}

// missing builds the error for key absent from the map that text reads.
func missing(text, key, path string, keys []string, inJet bool) error {
	parent := parentOf(text)
	text = parent + "." + key
	msg := fmt.Sprintf("%s has no key %q", parent, key)
	if len(keys) > 0 && len(keys) <= 12 {
		msg += "; it has " + strings.Join(keys, ", ")
	}
	return fmt.Errorf("%w; if it may be missing, write %s", errMissing{msg: msg, environ: parent == "Environ"}, suggestion(text, path, inJet))
}

// confined adds to a missing-variable error of a scope that sees no
// environment why the variable is missing.
func (x *Expander) confined(err error) error {
	var em errMissing
	if x.env.NoEnviron && errors.As(err, &em) && em.environ && !strings.Contains(err.Error(), confinedHint) {
		return fmt.Errorf("%w %s", err, confinedHint)
	}
	return err
}

const confinedHint = "(this manifest's scope is confined by grants and sees no environment variables)"

// suggestion is the lenient spelling of the access text.
func suggestion(text, path string, inJet bool) string {
	if inJet {
		if path != "" {
			return fmt.Sprintf("lookup(%q, DEFAULT) or isset(%s) ? %s : DEFAULT", path, text, text)
		}
		return fmt.Sprintf("isset(%s) ? %s : DEFAULT", text, text)
	}
	if path != "" {
		return fmt.Sprintf("lookup(%q, DEFAULT) or %s ?? DEFAULT", path, text)
	}
	return text + " ?? DEFAULT"
}

// errMissing prints msg and matches ErrMissing; environ is set when the
// missing key is an environment variable.
type errMissing struct {
	msg     string
	environ bool
}

func (e errMissing) Error() string        { return e.msg }
func (e errMissing) Is(target error) bool { return target == ErrMissing }

func keysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
