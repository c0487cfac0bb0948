// Command gen writes the wire codec's per-type code (abi_gen.go) and the
// completeness tests' list of documents (docs_gen_test.go) from the types
// of sdk/abi, by reflection: a field added to an abi type reaches the
// codec by `go generate ./sdk/...`, and CI checks that the committed files
// are what gen writes (.ci/run).
//
// The lists below say which documents the guest encodes (export outputs,
// host-call requests) and decodes (export inputs, host-call responses); the
// types they reach (Capabilities, DirEntry, CallError) follow. gen fails on
// an exported struct type of sdk/abi that no list reaches, so a new
// document cannot be forgotten, and on a field kind the codec lacks.
//
// Usage: go run ./gen [-o DIR] (default: the current directory).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// encoded are the documents the guest sends, in Marshal's switch order.
var encoded = []reflect.Type{
	reflect.TypeFor[abi.PluginInfo](),
	reflect.TypeFor[abi.ValidateResponse](),
	reflect.TypeFor[abi.ValidateBatchResponse](),
	reflect.TypeFor[abi.StatusResponse](),
	reflect.TypeFor[abi.Result](),
	reflect.TypeFor[abi.BatchResponse](),
	reflect.TypeFor[abi.FSStatRequest](),
	reflect.TypeFor[abi.FSReadRequest](),
	reflect.TypeFor[abi.FSWriteRequest](),
	reflect.TypeFor[abi.FSMkdirRequest](),
	reflect.TypeFor[abi.FSRemoveRequest](),
	reflect.TypeFor[abi.FSChownRequest](),
	reflect.TypeFor[abi.FSChmodRequest](),
	reflect.TypeFor[abi.FSListRequest](),
	reflect.TypeFor[abi.ExecRequest](),
	reflect.TypeFor[abi.UserLookupRequest](),
	reflect.TypeFor[abi.GroupLookupRequest](),
	reflect.TypeFor[abi.LookupRequest](),
	reflect.TypeFor[abi.LogRequest](),
	reflect.TypeFor[abi.NetFetchRequest](),
}

// decoded are the documents the guest receives, in Unmarshal's switch order.
var decoded = []reflect.Type{
	reflect.TypeFor[abi.ValidateRequest](),
	reflect.TypeFor[abi.ValidateBatchRequest](),
	reflect.TypeFor[abi.Request](),
	reflect.TypeFor[abi.BatchRequest](),
	reflect.TypeFor[abi.Response](),
	reflect.TypeFor[abi.FSStatResponse](),
	reflect.TypeFor[abi.FSReadResponse](),
	reflect.TypeFor[abi.FSListResponse](),
	reflect.TypeFor[abi.ExecResponse](),
	reflect.TypeFor[abi.UserLookupResponse](),
	reflect.TypeFor[abi.GroupLookupResponse](),
	reflect.TypeFor[abi.LookupResponse](),
	reflect.TypeFor[abi.NetFetchResponse](),
	reflect.TypeFor[abi.Empty](),
}

var (
	rawType    = reflect.TypeFor[json.RawMessage]()
	anyMapType = reflect.TypeFor[map[string]any]()
	anyType    = reflect.TypeFor[any]()
	bytesType  = reflect.TypeFor[[]byte]()
	abiPath    = reflect.TypeFor[abi.Request]().PkgPath()
)

type field struct {
	name, key string
	omit      bool
	typ       reflect.Type
}

// fields lists t's JSON members as encoding/json sees them.
func fields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("json")
		if !ok || tag == "" {
			log.Fatalf("%s.%s: no json tag; every abi field names its key", t, f.Name)
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		out = append(out, field{name: f.Name, key: name, omit: opts == "omitempty", typ: f.Type})
	}
	return out
}

func isAbiStruct(t reflect.Type) bool { return t.Kind() == reflect.Struct && t.PkgPath() == abiPath }

// gen accumulates the generated code.
type gen struct {
	enc, dec       bytes.Buffer
	encDone, decDn map[reflect.Type]bool
	queue          []func()
}

func (g *gen) p(b *bytes.Buffer, format string, args ...any) { fmt.Fprintf(b, format+"\n", args...) }

// encName and decName name the methods of t.
func encName(t reflect.Type) string { return "enc" + t.Name() }
func decName(t reflect.Type) string { return "dec" + t.Name() }

func (g *gen) needEnc(t reflect.Type) {
	if !g.encDone[t] {
		g.encDone[t] = true
		g.queue = append(g.queue, func() { g.encoder(t) })
	}
}

func (g *gen) needDec(t reflect.Type) {
	if !g.decDn[t] {
		g.decDn[t] = true
		g.queue = append(g.queue, func() { g.decoder(t) })
	}
}

// encoder writes the method encoding t, for a type other types hold.
func (g *gen) encoder(t reflect.Type) {
	b := &g.enc
	g.p(b, "\nfunc (e *encoder) %s(v abi.%s) {", encName(t), t.Name())
	g.encBody(b, t)
	g.p(b, "}")
}

// encBody writes the statements encoding v of type t.
func (g *gen) encBody(b *bytes.Buffer, t reflect.Type) {
	g.p(b, "o := e.object()")
	for _, f := range fields(t) {
		omit := ""
		if f.omit {
			omit = "Omit"
		}
		ft := f.typ
		switch {
		case ft == rawType:
			if !f.omit {
				log.Fatalf("%s.%s: a json.RawMessage field must be omitempty", t, f.name)
			}
			g.p(b, "o.rawOmit(%q, v.%s)", f.key, f.name)
		case ft == anyMapType:
			g.p(b, "o.anyMap%s(%q, v.%s)", omit, f.key, f.name)
		case ft == bytesType:
			g.p(b, "o.bytes%s(%q, v.%s)", omit, f.key, f.name)
		case ft.Kind() == reflect.String:
			g.p(b, "o.str%s(%q, v.%s)", omit, f.key, f.name)
		case ft.Kind() == reflect.Bool:
			g.p(b, "o.bool%s(%q, v.%s)", omit, f.key, f.name)
		case ft.Kind() == reflect.Int, ft.Kind() == reflect.Int64, ft.Kind() == reflect.Uint32:
			g.p(b, "o.int%s(%q, int64(v.%s))", omit, f.key, f.name)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			g.p(b, "o.strs%s(%q, v.%s)", omit, f.key, f.name)
		case ft.Kind() == reflect.Slice && isAbiStruct(ft.Elem()):
			g.needEnc(ft.Elem())
			if f.omit {
				g.p(b, "if len(v.%s) > 0 {", f.name)
			}
			g.p(b, "o.key(%q)", f.key)
			g.p(b, "e.list(len(v.%[1]s), v.%[1]s == nil, func(i int) { e.%[2]s(v.%[1]s[i]) })", f.name, encName(ft.Elem()))
			if f.omit {
				g.p(b, "}")
			}
		case isAbiStruct(ft) && !f.omit:
			g.needEnc(ft)
			g.p(b, "o.key(%q).%s(v.%s)", f.key, encName(ft), f.name)
		case ft == anyType && !f.omit:
			g.p(b, "o.key(%q).value(v.%s)", f.key, f.name)
		default:
			log.Fatalf("%s.%s: the wire encoder has no code for %s (omitempty %v); add it to sdk/internal/wire/gen", t, f.name, ft, f.omit)
		}
	}
	g.p(b, "o.end()")
}

// decoder writes the method decoding t, for a type other types hold.
func (g *gen) decoder(t reflect.Type) {
	b := &g.dec
	g.p(b, "\nfunc (d *decoder) %s(v *abi.%s) error {", decName(t), t.Name())
	g.p(b, "return %s", g.decExpr(t))
	g.p(b, "}")
}

// decExpr returns the expression decoding into v of type *t.
func (g *gen) decExpr(t reflect.Type) string {
	b := &bytes.Buffer{}
	fs := fields(t)
	if len(fs) == 0 {
		return fmt.Sprintf("d.object(%q, func(string) error { return d.skip() })", t.String())
	}
	g.p(b, "d.object(%q, func(k string) error {", t.String())
	g.p(b, "switch k {")
	for _, f := range fs {
		g.p(b, "case %q:", f.key)
		ft := f.typ
		switch {
		case ft == rawType:
			g.p(b, "raw, err := d.raw()")
			g.p(b, "v.%s = raw", f.name)
			g.p(b, "return err")
		case ft == anyMapType:
			g.p(b, "return d.anyMap(&v.%s)", f.name)
		case ft == anyType:
			g.p(b, "val, err := d.any()")
			g.p(b, "v.%s = val", f.name)
			g.p(b, "return err")
		case ft == bytesType:
			g.p(b, "return d.bytes(&v.%s)", f.name)
		case ft.Kind() == reflect.String:
			g.p(b, "return d.string(&v.%s)", f.name)
		case ft.Kind() == reflect.Bool:
			g.p(b, "return d.bool(&v.%s)", f.name)
		case ft.Kind() == reflect.Int:
			g.p(b, "return d.intField(&v.%s)", f.name)
		case ft.Kind() == reflect.Int64:
			g.p(b, "return d.int64Field(&v.%s)", f.name)
		case ft.Kind() == reflect.Uint32:
			g.p(b, "return d.uint32Field(&v.%s)", f.name)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String:
			g.p(b, "return d.strs(&v.%s)", f.name)
		case ft.Kind() == reflect.Pointer && isAbiStruct(ft.Elem()):
			g.needDec(ft.Elem())
			g.p(b, "if isNull, err := d.null(); isNull || err != nil {")
			g.p(b, "v.%s = nil", f.name)
			g.p(b, "return err")
			g.p(b, "}")
			g.p(b, "if v.%s == nil {", f.name)
			g.p(b, "v.%s = &abi.%s{}", f.name, ft.Elem().Name())
			g.p(b, "}")
			g.p(b, "return d.%s(v.%s)", decName(ft.Elem()), f.name)
		case ft.Kind() == reflect.Slice && isAbiStruct(ft.Elem()):
			g.needDec(ft.Elem())
			el := ft.Elem()
			g.p(b, "var out []abi.%s", el.Name())
			g.p(b, "isNull, err := d.array(%q, func() error {", ft.String())
			g.p(b, "var r abi.%s", el.Name())
			g.p(b, "err := d.%s(&r)", decName(el))
			g.p(b, "out = append(out, r)")
			g.p(b, "return err")
			g.p(b, "})")
			g.p(b, "setSlice(&v.%s, out, isNull)", f.name)
			g.p(b, "return err")
		case isAbiStruct(ft):
			g.needDec(ft)
			g.p(b, "return d.%s(&v.%s)", decName(ft), f.name)
		default:
			log.Fatalf("%s.%s: the wire decoder has no code for %s; add it to sdk/internal/wire/gen", t, f.name, ft)
		}
	}
	g.p(b, "}")
	g.p(b, "return d.skip()")
	b.WriteString("})")
	return b.String()
}

const header = "// Code generated by sdk/internal/wire/gen from the types of sdk/abi; DO NOT EDIT.\n\n"

func main() {
	log.SetFlags(0)
	log.SetPrefix("wire/gen: ")
	out := flag.String("o", ".", "directory to write abi_gen.go and docs_gen_test.go in")
	abiDir := flag.String("abi", "../../abi", "directory of package sdk/abi's source (every exported struct must be reached)")
	flag.Parse()

	// A document only Marshal or Unmarshal takes is coded inline in their
	// switch; a type other types hold gets a method. (In a wasm guest every
	// function costs: the codec stays as small as the hand-written one.)
	g := &gen{encDone: map[reflect.Type]bool{}, decDn: map[reflect.Type]bool{}}
	encBodies, decExprs := map[reflect.Type]string{}, map[reflect.Type]string{}
	held := heldTypes()
	for _, t := range encoded {
		if held[t] {
			g.needEnc(t)
			continue
		}
		var b bytes.Buffer
		g.encBody(&b, t)
		encBodies[t] = b.String()
	}
	for _, t := range decoded {
		if held[t] {
			g.needDec(t)
			continue
		}
		decExprs[t] = g.decExpr(t)
	}
	for len(g.queue) > 0 {
		f := g.queue[0]
		g.queue = g.queue[1:]
		f()
	}
	for _, t := range encoded {
		g.encDone[t] = true
	}
	for _, t := range decoded {
		g.decDn[t] = true
	}
	checkReached(*abiDir, g)

	var src bytes.Buffer
	src.WriteString(header)
	src.WriteString("package wire\n\nimport \"github.com/ccm-dev/ccm/sdk/abi\"\n")
	src.WriteString("\n// encodeDoc writes v when it is a document the guest sends and reports\n// whether it was.\nfunc (e *encoder) encodeDoc(v any) bool {\nswitch v := v.(type) {\n")
	for _, t := range encoded {
		if body, ok := encBodies[t]; ok {
			fmt.Fprintf(&src, "case abi.%s:\n%s", t.Name(), body)
		} else {
			fmt.Fprintf(&src, "case abi.%s:\ne.%s(v)\n", t.Name(), encName(t))
		}
	}
	src.WriteString("default:\nreturn false\n}\nreturn true\n}\n")
	src.WriteString("\n// decodeDoc reads into v when it points to a document the guest receives\n// and reports whether it did.\nfunc (d *decoder) decodeDoc(v any) (bool, error) {\nswitch v := v.(type) {\n")
	for _, t := range decoded {
		if expr, ok := decExprs[t]; ok {
			fmt.Fprintf(&src, "case *abi.%s:\nreturn true, %s\n", t.Name(), expr)
		} else {
			fmt.Fprintf(&src, "case *abi.%s:\nreturn true, d.%s(v)\n", t.Name(), decName(t))
		}
	}
	src.WriteString("}\nreturn false, nil\n}\n")
	src.Write(g.enc.Bytes())
	src.Write(g.dec.Bytes())
	write(filepath.Join(*out, "abi_gen.go"), src.Bytes())

	var tst bytes.Buffer
	tst.WriteString(header)
	tst.WriteString("package wire\n\nimport \"github.com/ccm-dev/ccm/sdk/abi\"\n")
	tst.WriteString("\n// encodedDocs are the documents the guest sends (gen's list).\nvar encodedDocs = []any{\n")
	for _, t := range encoded {
		fmt.Fprintf(&tst, "abi.%s{},\n", t.Name())
	}
	tst.WriteString("}\n\n// decodedDocs are the documents the guest receives (gen's list).\nvar decodedDocs = []any{\n")
	for _, t := range decoded {
		fmt.Fprintf(&tst, "abi.%s{},\n", t.Name())
	}
	tst.WriteString("}\n")
	write(filepath.Join(*out, "docs_gen_test.go"), tst.Bytes())
}

// heldTypes are the abi structs a field of a listed document holds (alone,
// in a slice or by pointer), and CallError, which UnmarshalResponse decodes.
func heldTypes() map[reflect.Type]bool {
	held := map[reflect.Type]bool{reflect.TypeFor[abi.CallError](): true}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for _, f := range fields(t) {
			ft := f.typ
			if ft.Kind() == reflect.Slice || ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if isAbiStruct(ft) && !held[ft] {
				held[ft] = true
				walk(ft)
			}
		}
	}
	for _, t := range append(append([]reflect.Type(nil), encoded...), decoded...) {
		walk(t)
	}
	return held
}

// checkReached fails when sdk/abi declares an exported struct type that
// neither list reaches: a new document must be classified here.
func checkReached(dir string, g *gen) {
	reached := map[string]bool{}
	for t := range g.encDone {
		reached[t.Name()] = true
	}
	for t := range g.decDn {
		reached[t.Name()] = true
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		log.Fatalf("no Go files in %s (-abi): %v", dir, err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			log.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				if _, isStruct := ts.Type.(*ast.StructType); isStruct && ts.Name.IsExported() && !reached[ts.Name.Name] {
					log.Fatalf("sdk/abi type %s is in neither list of sdk/internal/wire/gen (encoded: the guest sends it; decoded: it receives it)", ts.Name.Name)
				}
			}
		}
	}
}

func write(path string, src []byte) {
	out, err := format.Source(src)
	if err != nil {
		log.Fatalf("format %s: %v\n%s", path, err, src)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		log.Fatal(err)
	}
}
