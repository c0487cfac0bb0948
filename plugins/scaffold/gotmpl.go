package main

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"

	sprig "github.com/go-task/slim-sprig/v3"
)

// Internal functions the Go-template rewrite inserts.
const (
	goRangeFn = "ccm_range__"
	goCallFn  = "ccm_call__"
	goTickFn  = "ccm_tick__"
)

// goFuncs is what a Go template sees: slim-sprig's functions, the ones
// that can build large values replaced by budgeted ones, CCM's template
// functions, and write and render.
func (r *renderer) goFuncs() template.FuncMap {
	if r.funcs != nil {
		return r.funcs
	}
	f := template.FuncMap(sprig.TxtFuncMap())
	r.funcs = f
	b := r.b
	f[goRangeFn] = func(v any) (any, error) {
		n := count(reflect.ValueOf(v))
		if n < 0 {
			return nil, fmt.Errorf("range over %T is not supported in a scaffold", v)
		}
		return v, b.step(n)
	}
	f[goCallFn] = func(args ...any) (any, error) {
		if err := b.step(1); err != nil {
			return nil, err
		}
		if len(args) == 0 {
			return nil, nil
		}
		return args[len(args)-1], nil
	}
	f[goTickFn] = func() (string, error) { return "", b.tick() }
	f["repeat"] = func(n int, s string) (string, error) { return b.repeat(s, n) }
	f["replace"] = func(old, new, src string) (string, error) { return b.replace(src, old, new, -1) }
	f["indent"] = func(n int, s string) (string, error) { return b.indent(n, s, false) }
	f["nindent"] = func(n int, s string) (string, error) { return b.indent(n, s, true) }
	f["join"] = func(sep string, v any) (string, error) { return b.join(sep, v) }
	f["until"] = func(n int) ([]int, error) { return b.seq(0, n, 1) }
	f["untilStep"] = func(start, stop, step int) ([]int, error) { return b.seq(start, stop, step) }
	f["seq"] = func(args ...int) (string, error) { return b.seqString(args...) }
	for _, name := range []string{"randAlpha", "randAlphaNum", "randNumeric", "randAscii"} {
		orig, ok := f[name].(func(int) string)
		if !ok {
			continue
		}
		f[name] = func(n int) (string, error) {
			if err := b.grow(name, int64(n)); err != nil {
				return "", err
			}
			return orig(n), nil
		}
	}
	for name, indent := range map[string]string{"toJson": "", "toRawJson": "", "toPrettyJson": "  ", "mustToJson": "", "mustToRawJson": "", "mustToPrettyJson": "  "} {
		f[name] = func(v any) (string, error) { return b.toJSON(name, v, indent) }
	}
	// The guest has no environment: env and expandenv read Environ, which
	// is empty in a scope confined by grants.
	environ, _ := r.env["environ"].(map[string]any)
	getenv := func(name string) string { s, _ := environ[name].(string); return s }
	f["env"] = getenv
	f["expandenv"] = func(s string) string { return os.Expand(s, getenv) }
	f["lookup"] = r.lookup
	f["readFile"] = r.readFile
	f["file"] = r.readFile
	f["jet"] = r.goJet
	f["kvGet"] = notSupported("kvGet")
	f["registrations"] = notSupported("registrations")
	f["write"] = func(out, content string) (string, error) { return "", r.write(out, content) }
	f["render"] = func(name string, data any) (string, error) { return r.render(name, data) }
	return f
}

func notSupported(name string) func(...any) (any, error) {
	return func(...any) (any, error) {
		return nil, fmt.Errorf("%s is not supported in scaffold templates (it needs NATS); look the value up in the manifest and pass it in data", name)
	}
}

// indent is sprig's indent and nindent, sized first.
func (b *budget) indent(n int, s string, newline bool) (string, error) {
	if n < 0 {
		n = 0
	}
	lines := int64(strings.Count(s, "\n") + 1)
	if err := b.grow("indent", int64(len(s))+lines*int64(n)+1); err != nil {
		return "", err
	}
	pad := strings.Repeat(" ", n)
	out := pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	if newline {
		out = "\n" + out
	}
	return out, nil
}

// join is sprig's join (nil items skipped, others printed), sized first.
func (b *budget) join(sep string, v any) (string, error) {
	var items []string
	switch t := v.(type) {
	case []string:
		items = t
	case string:
		return t, nil
	default:
		rv := indirectValue(reflect.ValueOf(v))
		if !rv.IsValid() {
			return "", nil
		}
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			return fmt.Sprint(v), nil
		}
		var n int64
		for i := 0; i < rv.Len(); i++ {
			e := rv.Index(i)
			if e.Kind() == reflect.Interface && e.IsNil() {
				continue
			}
			s := fmt.Sprint(e.Interface())
			if n += int64(len(s) + len(sep)); n > maxFileBytes {
				return "", b.grow("join", n)
			}
			items = append(items, s)
		}
	}
	var n int64
	for _, s := range items {
		n += int64(len(s) + len(sep))
	}
	if err := b.grow("join", n); err != nil {
		return "", err
	}
	return strings.Join(items, sep), nil
}

// seq lists start, start+step, ... up to stop (excluded), as sprig's
// untilStep, counted against the steps budget before it is built.
func (b *budget) seq(start, stop, step int) ([]int, error) {
	if step == 0 || (step > 0 && start >= stop) || (step < 0 && start <= stop) {
		return []int{}, nil
	}
	n := int64(math.Ceil(math.Abs(float64(stop)-float64(start)) / math.Abs(float64(step))))
	if err := b.step(n); err != nil {
		return nil, fmt.Errorf("until/untilStep of %d items: %w", n, err)
	}
	out := make([]int, 0, n)
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, i)
	}
	return out, nil
}

// seqString is sprig's seq (the bash command): seq LAST, seq FIRST LAST,
// seq FIRST INCREMENT LAST, space-separated, LAST included.
func (b *budget) seqString(args ...int) (string, error) {
	start, step, end := 1, 1, 0
	switch len(args) {
	case 0:
		return "", nil
	case 1:
		end = args[0]
		if end < 1 {
			step = -1
		}
	case 2:
		start, end = args[0], args[1]
		if end < start {
			step = -1
		}
	default:
		start, step, end = args[0], args[1], args[2]
	}
	if step == 0 || (step > 0 && start > end) || (step < 0 && start < end) {
		return "", nil
	}
	stop := end + 1
	if step < 0 {
		stop = end - 1
	}
	items, err := b.seq(start, stop, step)
	if err != nil {
		return "", err
	}
	s := make([]string, len(items))
	for i, n := range items {
		s[i] = fmt.Sprint(n)
	}
	return b.join(" ", s)
}

// rewriteGo makes every range of t count its iterations (its pipeline
// piped into goRangeFn) and every {{template}} call count as a step (its
// argument piped through goCallFn), so a loop bomb fails on the budget.
func rewriteGo(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			rewriteNode(tt.Tree, tt.Tree.Root)
		}
	}
}

func rewriteNode(tr *parse.Tree, n parse.Node) {
	switch x := n.(type) {
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			rewriteNode(tr, c)
		}
	case *parse.IfNode:
		rewriteBranch(tr, &x.BranchNode)
	case *parse.WithNode:
		rewriteBranch(tr, &x.BranchNode)
	case *parse.RangeNode:
		rewriteBranch(tr, &x.BranchNode)
		x.Pipe.Cmds = append(x.Pipe.Cmds, callCmd(tr, x.Pipe.Pos, goRangeFn))
		// Each iteration starts with a tick, so a loop over costly calls
		// meets the render-time limit.
		if x.List != nil {
			tick := &parse.ActionNode{NodeType: parse.NodeAction, Pos: x.Pos, Line: x.Line,
				Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: x.Pos, Line: x.Line, Cmds: []*parse.CommandNode{callCmd(tr, x.Pos, goTickFn)}}}
			x.List.Nodes = append([]parse.Node{tick}, x.List.Nodes...)
		}
	case *parse.TemplateNode:
		if x.Pipe == nil {
			x.Pipe = &parse.PipeNode{NodeType: parse.NodePipe, Pos: x.Pos, Line: x.Line}
		}
		x.Pipe.Cmds = append(x.Pipe.Cmds, callCmd(tr, x.Pos, goCallFn))
	}
}

func rewriteBranch(tr *parse.Tree, b *parse.BranchNode) {
	rewriteNode(tr, b.List)
	if b.ElseList != nil {
		rewriteNode(tr, b.ElseList)
	}
}

func callCmd(tr *parse.Tree, pos parse.Pos, name string) *parse.CommandNode {
	id := parse.NewIdentifier(name).SetTree(tr).SetPos(pos)
	return &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{id}}
}
