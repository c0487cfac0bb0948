package template

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/CloudyKit/jet/v6"
)

// jetFetchName is the Jet function strictJet puts in place of a field
// chain on Facts, Data or Environ.
const jetFetchName = "__ccm_get"

// jetRoots are the Jet variables whose keys must exist (both spellings).
var jetRoots = map[string]string{
	"Facts": "facts", "facts": "facts",
	"Data": "data", "data": "data",
	"Environ": "environ", "environ": "environ",
}

// canonical spells a lookup root as the expression variable.
var canonical = map[string]string{"facts": "Facts", "data": "Data", "environ": "Environ"}

var (
	jetNodeType = reflect.TypeOf((*jet.Node)(nil)).Elem()
	jetExprType = reflect.TypeOf((*jet.Expression)(nil)).Elem()
)

// strictJet rewrites every field chain rooted at Facts, Data or Environ
// in t (Data.a.b) into __ccm_get(Data, "a.b", "LINE"), which fails on a
// missing key as expressions do; chains inside isset() stay lenient. Jet
// has no hook for a missing map key, so the parsed tree is patched; it
// walks the exported fields of the node structs by reflection rather than
// naming each of Jet's node types. Templates Jet loads itself (include,
// import, extends) are patched by strictCache as Jet stores them.
func strictJet(t *jet.Template) {
	seen := map[uintptr]bool{}
	walkJet(reflect.ValueOf(t.Root), seen)
}

func walkJet(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		if c, ok := v.Interface().(*jet.CallExprNode); ok {
			if id, ok := c.BaseExpr.(*jet.IdentifierNode); ok && id.Ident == "isset" {
				return
			}
		}
		walkJet(v.Elem(), seen)
	case reflect.Interface:
		if !v.IsNil() {
			walkJet(v.Elem(), seen)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			f := v.Field(i)
			if f.Kind() == reflect.Interface && (f.Type() == jetNodeType || f.Type() == jetExprType) && f.CanSet() {
				if call := jetFetch(f); call != nil {
					f.Set(reflect.ValueOf(call))
					continue
				}
			}
			walkJet(f, seen)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			e := v.Index(i)
			if e.Kind() == reflect.Interface && e.CanSet() && (e.Type() == jetNodeType || e.Type() == jetExprType) {
				if call := jetFetch(e); call != nil {
					e.Set(reflect.ValueOf(call))
					continue
				}
			}
			walkJet(e, seen)
		}
	}
}

// jetFetch returns the strict call replacing the chain held by f, or nil
// when f holds something else.
func jetFetch(f reflect.Value) *jet.CallExprNode {
	c, ok := f.Interface().(*jet.ChainNode)
	if !ok {
		return nil
	}
	id, ok := c.Node.(*jet.IdentifierNode)
	if !ok || jetRoots[id.Ident] == "" || len(c.Field) == 0 {
		return nil
	}
	base := c.NodeBase
	base.NodeType = jet.NodeCallExpr
	str := func(s string) *jet.StringNode {
		b := c.NodeBase
		b.NodeType = jet.NodeString
		return &jet.StringNode{NodeBase: b, Quoted: strconv.Quote(s), Text: s}
	}
	fn := &jet.IdentifierNode{NodeBase: c.NodeBase, Ident: jetFetchName}
	fn.NodeType = jet.NodeIdentifier
	return &jet.CallExprNode{
		NodeBase: base,
		BaseExpr: fn,
		CallArgs: jet.CallArgs{Exprs: []jet.Expression{id, str(canonical[jetRoots[id.Ident]]), str(strings.Join(c.Field, ".")), str(c.TemplatePath), str(strconv.Itoa(c.Line))}},
	}
}

// jetGet is __ccm_get(root, "Data", "a.b", TEMPLATEPATH, "LINE"); the
// template Jet parsed as top is shown as name in errors, others (includes)
// by their path. Each step goes through fetch, so Jet's messages and
// expressions' read the same.
func (x *Expander) jetGet(top, name string) jet.Func {
	return func(a jet.Arguments) reflect.Value {
		var cur any
		if v := a.Get(0); v.IsValid() && v.CanInterface() {
			cur = v.Interface()
		}
		root, path, tpl, line := a.Get(1).String(), a.Get(2).String(), a.Get(3).String(), a.Get(4).String()
		if tpl != top && tpl != "" {
			name = strings.TrimPrefix(tpl, "/")
		}
		text, lookup := root, strings.ToLower(root)
		for _, k := range strings.Split(path, ".") {
			lookup += "." + k
			v, err := fetch(cur, k, text+"."+k, lookup, true)
			if err != nil {
				err = x.confined(err)
				panic(&jetErr{where: name + ":" + line, msg: fmt.Sprintf("%s.%s: %v", root, path, err), err: err})
			}
			cur, text = v, text+"."+k
		}
		if cur == nil {
			// A key that exists with a null value renders "".
			return reflect.ValueOf("")
		}
		return reflect.ValueOf(cur)
	}
}
