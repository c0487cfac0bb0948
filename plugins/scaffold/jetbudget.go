package main

// The Jet side of the budgets, adapted from runtime/template/jetbudget.go
// (a plugin may not import runtime/): Jet has no hook for its operators or
// loops, so each parsed template is rewritten before it runs. Every binary
// + becomes a call of jetAddFn (strings sized before they are built),
// every range expression is wrapped in a call of jetRangeFn (a ranger that
// counts iterations), and every block body and template root starts with
// a call of jetDepthFn (a stack-depth check: a file that includes itself
// fails instead of overflowing the stack).

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/CloudyKit/jet/v6"
)

const (
	jetAddFn   = "ccm_add__"
	jetRangeFn = "ccm_range__"
	jetDepthFn = "ccm_depth__"
)

// maxJetFrames bounds the Go stack a Jet render may use, in frames.
const maxJetFrames = 4000

// jetBudget adds the budget's functions to set.
func (b *budget) jetBudget(set *jet.Set) {
	var frames []uintptr
	enters := 0
	set.AddGlobalFunc(jetAddFn, func(a jet.Arguments) reflect.Value {
		v, err := b.jetAdd(a.Get(0), a.Get(1))
		if err != nil {
			a.Panicf("%v", err)
		}
		return v
	})
	set.AddGlobalFunc(jetDepthFn, func(a jet.Arguments) reflect.Value {
		if err := b.step(1); err != nil {
			a.Panicf("%v", err)
		}
		enters++
		if enters%4 != 1 {
			return reflect.ValueOf("")
		}
		if frames == nil {
			frames = make([]uintptr, maxJetFrames+1)
		}
		if runtime.Callers(0, frames) > maxJetFrames {
			a.Panicf("%v: Jet blocks and includes nested past %d stack frames (max_jet_depth); does a block yield itself, or a file include itself?", errBudget, maxJetFrames)
		}
		return reflect.ValueOf("")
	})
	set.AddGlobalFunc(jetRangeFn, func(a jet.Arguments) reflect.Value {
		r, err := b.ranger(a.Get(0))
		if err != nil {
			a.Panicf("%v", err)
		}
		return reflect.ValueOf(r)
	})
	set.AddGlobalFunc("repeat", func(a jet.Arguments) reflect.Value {
		a.RequireNumOfArguments("repeat", 2, 2)
		n, ok := toInt(indirectValue(a.Get(1)).Interface())
		if !ok {
			a.Panicf("repeat: the count must be an integer")
		}
		s, err := b.repeat(jetString(a, "repeat", 0), n)
		if err != nil {
			a.Panicf("%v", err)
		}
		return reflect.ValueOf(s)
	})
	set.AddGlobalFunc("replace", func(a jet.Arguments) reflect.Value {
		a.RequireNumOfArguments("replace", 4, 4)
		n, ok := toInt(indirectValue(a.Get(3)).Interface())
		if !ok {
			a.Panicf("replace: the count must be an integer")
		}
		s, err := b.replace(jetString(a, "replace", 0), jetString(a, "replace", 1), jetString(a, "replace", 2), n)
		if err != nil {
			a.Panicf("%v", err)
		}
		return reflect.ValueOf(s)
	})
	set.AddGlobalFunc("json", func(a jet.Arguments) reflect.Value {
		a.RequireNumOfArguments("json", 1, 1)
		var v any
		if x := a.Get(0); x.IsValid() && x.CanInterface() {
			v = x.Interface()
		}
		s, err := b.toJSON("json", v, "")
		if err != nil {
			a.Panicf("%v", err)
		}
		return reflect.ValueOf([]byte(s))
	})
}

func jetString(a jet.Arguments, fn string, i int) string {
	v := indirectValue(a.Get(i))
	if v.Kind() != reflect.String {
		a.Panicf("%s: argument %d must be a string", fn, i+1)
	}
	return v.String()
}

func indirectValue(v reflect.Value) reflect.Value {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) && !v.IsNil() {
		v = v.Elem()
	}
	return v
}

// jetAdd is Jet's + (eval.go evalAdditiveExpression), with a string
// result sized before it is built.
func (b *budget) jetAdd(left, right reflect.Value) (reflect.Value, error) {
	left, right = indirectValue(left), indirectValue(right)
	if !left.IsValid() {
		return reflect.Value{}, fmt.Errorf("left side of additive expression is invalid value")
	}
	if !right.IsValid() {
		return reflect.Value{}, fmt.Errorf("right side of additive expression is invalid value")
	}
	lk, rk := left.Kind(), right.Kind()
	switch {
	case lk == reflect.String:
		if rk == reflect.Slice && right.Type().Elem().Kind() == reflect.Uint8 {
			right = right.Convert(left.Type())
		}
		var rs string
		if right.Kind() == reflect.String {
			rs = right.String()
		} else {
			rs = fmt.Sprint(right)
		}
		if err := b.grow("string concatenation (+)", int64(left.Len())+int64(len(rs))); err != nil {
			return reflect.Value{}, err
		}
		return reflect.ValueOf(left.String() + rs), nil
	case isFloatKind(rk) && !isFloatKind(lk):
		switch {
		case left.CanInt():
			return reflect.ValueOf(float64(left.Int()) + right.Float()), nil
		case left.CanUint():
			return reflect.ValueOf(float64(left.Uint()) + right.Float()), nil
		}
	case left.CanInt():
		n, err := jetNumber(right, func(s string) (any, error) { return strconv.ParseInt(s, 10, 0) })
		if err != nil {
			return reflect.Value{}, err
		}
		return reflect.ValueOf(left.Int() + n.(int64)), nil
	case isFloatKind(lk):
		n, err := jetNumber(right, func(s string) (any, error) { return strconv.ParseFloat(s, 64) })
		if err != nil {
			return reflect.Value{}, err
		}
		return reflect.ValueOf(left.Float() + n.(float64)), nil
	case left.CanUint():
		n, err := jetNumber(right, func(s string) (any, error) { return strconv.ParseUint(s, 10, 0) })
		if err != nil {
			return reflect.Value{}, err
		}
		return reflect.ValueOf(left.Uint() + n.(uint64)), nil
	}
	return reflect.Value{}, fmt.Errorf("additive expression: left side (%s) is not a numeric value", left.Type())
}

func isFloatKind(k reflect.Kind) bool { return k == reflect.Float32 || k == reflect.Float64 }

// jetNumber converts v the way Jet's toInt, toFloat and toUint do, to the
// type parse returns.
func jetNumber(v reflect.Value, parse func(string) (any, error)) (any, error) {
	zero, _ := parse("0")
	var out reflect.Value
	switch {
	case v.CanInt():
		out = reflect.ValueOf(v.Int())
	case v.CanUint():
		out = reflect.ValueOf(v.Uint())
	case isFloatKind(v.Kind()):
		out = reflect.ValueOf(v.Float())
	case v.Kind() == reflect.String:
		return parse(v.String())
	case v.Kind() == reflect.Bool:
		// Jet's own conversion: true is 0, false is 1.
		n := "1"
		if v.Bool() {
			n = "0"
		}
		return parse(n)
	default:
		return nil, fmt.Errorf("additive expression: right side (%s) is not a numeric value", v.Type())
	}
	return out.Convert(reflect.TypeOf(zero)).Interface(), nil
}

// countedRanger is Jet's ranging over a slice, array, map, channel or
// Ranger, counting each iteration against the budget.
type countedRanger struct {
	b     *budget
	inner jet.Ranger
	v     reflect.Value
	i     int
	iter  *reflect.MapIter
	more  bool
	index bool
}

var _ jet.Ranger = (*countedRanger)(nil)

func (b *budget) ranger(v reflect.Value) (*countedRanger, error) {
	if !v.IsValid() {
		return nil, fmt.Errorf("can't range over invalid value")
	}
	r := &countedRanger{b: b, index: true}
	if v.CanInterface() {
		if in, ok := v.Interface().(jet.Ranger); ok {
			r.inner, r.index = in, in.ProvidesIndex()
			return r, nil
		}
	}
	v = indirectValue(v)
	switch v.Kind() {
	case reflect.Slice, reflect.Array:
		r.v = v
	case reflect.Map:
		r.iter = v.MapRange()
		r.more = r.iter.Next()
	case reflect.Chan:
		r.v, r.index = v, false
	default:
		return nil, fmt.Errorf("value %v (type %s) is not rangeable", v, v.Type())
	}
	return r, nil
}

func (r *countedRanger) Range() (index, value reflect.Value, end bool) {
	switch {
	case r.inner != nil:
		index, value, end = r.inner.Range()
	case r.iter != nil:
		if !r.more {
			return index, value, true
		}
		index, value = r.iter.Key(), r.iter.Value()
		r.more = r.iter.Next()
	case r.v.Kind() == reflect.Chan:
		var ok bool
		value, ok = r.v.Recv()
		end = !ok
	default:
		if r.i >= r.v.Len() {
			return index, value, true
		}
		index, value = reflect.ValueOf(r.i), r.v.Index(r.i)
		r.i++
	}
	if !end {
		if err := r.b.step(1); err != nil {
			panic(err)
		}
	}
	return index, value, end
}

func (r *countedRanger) ProvidesIndex() bool { return r.index }

// jetRewriter rewrites parsed templates in place (see the top of the
// file). seen keeps a node from being rewritten twice when two templates
// share it (imports, blocks).
type jetRewriter struct {
	seen map[unsafe.Pointer]bool
}

var (
	setPtrType   = reflect.TypeOf((*jet.Set)(nil))
	additiveType = reflect.TypeOf((*jet.AdditiveExprNode)(nil))
	rangeType    = reflect.TypeOf((*jet.RangeNode)(nil))
	blockType    = reflect.TypeOf((*jet.BlockNode)(nil))
	templateType = reflect.TypeOf((*jet.Template)(nil))
)

// measure makes list start with a call of jetDepthFn.
func (w *jetRewriter) measure(list *jet.ListNode) {
	if list == nil {
		return
	}
	at := list.NodeBase
	action := at
	action.NodeType = jet.NodeAction
	pipe := at
	pipe.NodeType = jet.NodePipe
	cmd := at
	cmd.NodeType = jet.NodeCommand
	call := jetCallNode(at, jetDepthFn)
	list.Nodes = append([]jet.Node{&jet.ActionNode{
		NodeBase: action,
		Pipe: &jet.PipeNode{NodeBase: pipe, Cmds: []*jet.CommandNode{{
			NodeBase:     cmd,
			CallExprNode: jet.CallExprNode{NodeBase: call.NodeBase, BaseExpr: call},
		}}},
	}}, list.Nodes...)
}

// template rewrites t and every template it reaches (extends, imports,
// their blocks). Unexported fields of Jet's types are reached through
// unsafe: the rewrite changes only exported node fields, to exported
// node types.
func (w *jetRewriter) template(t *jet.Template) {
	if w.seen == nil {
		w.seen = map[unsafe.Pointer]bool{}
	}
	w.walk(reflect.ValueOf(t))
}

func (w *jetRewriter) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Type() == setPtrType {
			return
		}
		p := v.UnsafePointer()
		if w.seen[p] {
			return
		}
		w.seen[p] = true
		w.walk(v.Elem())
		switch v.Type() {
		case rangeType:
			w.wrapRange(v.Interface().(*jet.RangeNode))
		case blockType:
			w.measure(v.Interface().(*jet.BlockNode).List)
		case templateType:
			w.measure(v.Interface().(*jet.Template).Root)
		}
	case reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !f.CanSet() && f.CanAddr() {
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			w.walk(f)
			w.replacePlus(f)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			w.walk(e)
			w.replacePlus(e)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			w.walk(it.Value())
		}
	}
}

// replacePlus turns a binary + held in f into a call of jetAddFn.
func (w *jetRewriter) replacePlus(f reflect.Value) {
	if f.Kind() != reflect.Interface || f.IsNil() || !f.CanSet() || f.Elem().Type() != additiveType {
		return
	}
	n := f.Elem().Interface().(*jet.AdditiveExprNode)
	op := reflect.ValueOf(n).Elem().FieldByName("Operator").FieldByName("val").String()
	if op != "+" || n.Left == nil {
		return
	}
	call := jetCallNode(n.NodeBase, jetAddFn, n.Left, n.Right)
	if reflect.TypeOf(call).AssignableTo(f.Type()) {
		f.Set(reflect.ValueOf(call))
	}
}

// wrapRange makes a range iterate through jetRangeFn.
func (w *jetRewriter) wrapRange(n *jet.RangeNode) {
	if n.Set != nil && len(n.Set.Right) > 0 {
		n.Set.Right[0] = jetCallNode(n.NodeBase, jetRangeFn, n.Set.Right[0])
		return
	}
	if n.Expression != nil {
		n.Expression = jetCallNode(n.NodeBase, jetRangeFn, n.Expression)
	}
}

func jetCallNode(at jet.NodeBase, name string, args ...jet.Expression) *jet.CallExprNode {
	base := at
	base.NodeType = jet.NodeCallExpr
	ident := at
	ident.NodeType = jet.NodeIdentifier
	return &jet.CallExprNode{
		NodeBase: base,
		BaseExpr: &jet.IdentifierNode{NodeBase: ident, Ident: name},
		CallArgs: jet.CallArgs{Exprs: args},
	}
}
