package main

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"strings"
	"text/template"
	"time"

	"github.com/CloudyKit/jet/v6"
	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// produced is one file the source renders to.
type produced struct {
	rel     string // slash path under the target
	content []byte
	from    string // source template, for messages ("write()" for write)
	perm    uint32 // 0 = fileMode; a post command may change it
}

func (f *produced) mode() uint32     { return f.perm }
func (f *produced) setMode(m uint32) { f.perm = m }

// renderer renders one scaffold's source tree in memory. Files are read
// through the host (the scope's fs_read grant); nothing is written here.
type renderer struct {
	h       sdk.Host
	s       spec
	src     string // absolute source directory
	workDir string
	env     map[string]any // facts, data, environ under both spellings
	b       *budget
	depth   int

	files map[string]*produced
	order []string // rel paths in the order first produced
	dirs  []string // source directories (rel), created in the target
	cache map[string][]byte
	funcs template.FuncMap // the Go engine's functions, built once
}

func newRenderer(h sdk.Host, s spec, src, workDir string, env map[string]any) *renderer {
	return &renderer{h: h, s: s, src: src, workDir: workDir, env: env, b: &budget{started: time.Now()},
		files: map[string]*produced{}, cache: map[string][]byte{}}
}

// templateEnv builds what templates see: facts, data (the resource's data
// when set, as CCM) and environ, each under its lower- and upper-case name.
func templateEnv(h sdk.Host, s spec) (map[string]any, error) {
	get := func(key string) (map[string]any, error) {
		v, found, err := h.Lookup(key)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", key, err)
		}
		m, _ := v.(map[string]any)
		if !found || m == nil {
			return map[string]any{}, nil
		}
		return normalise(m).(map[string]any), nil
	}
	facts, err := get("facts")
	if err != nil {
		return nil, err
	}
	data := s.data
	if data == nil {
		if data, err = get("data"); err != nil {
			return nil, err
		}
	}
	environ, err := get("environ")
	if err != nil {
		return nil, err
	}
	return map[string]any{"facts": facts, "Facts": facts, "data": data, "Data": data, "environ": environ, "Environ": environ}, nil
}

// walk renders every file of the source tree, _partials directories left
// out, in lexical order as CCM's walk.
func (r *renderer) walk(rel string) error {
	dir := path.Join(r.src, rel)
	entries, err := r.h.List(abi.FSListRequest{Path: dir})
	if err != nil {
		return fmt.Errorf("reading source directory %s: %w", dir, err)
	}
	for _, e := range entries {
		child := path.Join(rel, e.Name)
		switch e.Type {
		case "directory":
			if e.Name == "_partials" {
				continue
			}
			r.dirs = append(r.dirs, child)
			if err := r.walk(child); err != nil {
				return err
			}
		case "file":
			if len(r.cache) >= maxSourceFiles {
				return fmt.Errorf("%w: the source has more than %d files (max_source_files)", errBudget, maxSourceFiles)
			}
			out, err := r.renderFile(child, r.env)
			if err != nil {
				return err
			}
			if r.s.skipEmpty && len(bytes.TrimSpace(out)) == 0 {
				continue
			}
			r.put(child, out, child)
		default:
			return fmt.Errorf("invalid file in source: %s is a %s; a scaffold source holds only directories and regular files", path.Join(r.src, child), e.Type)
		}
	}
	return nil
}

func (r *renderer) put(rel string, content []byte, from string) {
	if _, ok := r.files[rel]; !ok {
		r.order = append(r.order, rel)
	}
	r.files[rel] = &produced{rel: rel, content: content, from: from}
}

// read returns a source file's bytes, rel being a slash path under the
// source directory.
func (r *renderer) read(rel string) ([]byte, error) {
	if b, ok := r.cache[rel]; ok {
		return b, nil
	}
	b, err := r.h.ReadFile(abi.FSReadRequest{Path: path.Join(r.src, rel), MaxBytes: maxFileBytes})
	if err != nil {
		return nil, fmt.Errorf("reading template %s: %w", path.Join(r.src, rel), err)
	}
	r.cache[rel] = b
	return b, nil
}

// renderFile renders the source file rel with data.
func (r *renderer) renderFile(rel string, data any) ([]byte, error) {
	body, err := r.read(rel)
	if err != nil {
		return nil, err
	}
	var out []byte
	if r.s.engine == engineGo {
		out, err = r.renderGo(rel, string(body), data)
	} else {
		out, err = r.renderJet(rel, string(body), data, r.s.left, r.s.right)
	}
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", path.Join(r.src, rel), err)
	}
	return out, nil
}

func (r *renderer) renderGo(name, body string, data any) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("the Go template evaluator failed: %v", p)
		}
	}()
	if err := checkNesting(body, r.s.left, r.s.right); err != nil {
		return nil, err
	}
	t, err := template.New(path.Base(name)).Delims(r.s.left, r.s.right).Funcs(r.goFuncs()).Parse(body)
	if err != nil {
		return nil, fmt.Errorf("parsing template: %w", err)
	}
	rewriteGo(t)
	w := &output{b: r.b, what: "the output of " + name}
	if err := t.Execute(w, data); err != nil {
		if w.err != nil {
			return nil, w.err
		}
		return nil, err
	}
	return w.buf, nil
}

func (r *renderer) renderJet(name, body string, data any, left, right string) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("the Jet evaluator failed: %v", p)
		}
	}()
	if err := checkNesting(body, left, right); err != nil {
		return nil, err
	}
	loader := jet.NewInMemLoader()
	loader.Set("/"+name, body)
	set := jet.NewSet(loader, jet.WithDelims(left, right), jet.WithSafeWriter(nil))
	for k, fn := range r.jetFuncs() {
		set.AddGlobalFunc(k, fn)
	}
	r.b.jetBudget(set)
	t, err := set.GetTemplate("/" + name)
	if err != nil {
		return nil, fmt.Errorf("parsing template: %w", err)
	}
	(&jetRewriter{}).template(t)
	vars := jet.VarMap{}
	for k, v := range r.env {
		vars.Set(k, v)
	}
	if m, ok := data.(map[string]any); ok {
		for _, k := range []string{"facts", "Facts", "data", "Data", "environ", "Environ"} {
			if v, ok := m[k]; ok {
				vars.Set(k, v)
			}
		}
	}
	w := &output{b: r.b, what: "the output of " + name}
	if err := t.Execute(w, vars, data); err != nil {
		if w.err != nil {
			return nil, w.err
		}
		return nil, cleanJet(err)
	}
	if w.err != nil {
		return nil, w.err
	}
	return w.buf, nil
}

// jetUnknown is the variable dump of Jet's unknown-identifier error.
var jetUnknown = regexp.MustCompile(` not available in current \(map\[.*\]\) or parent scope, global, or default variables`)

// cleanJet shortens Jet's unknown-identifier error, which prints every
// variable's type, to one line saying what exists.
func cleanJet(err error) error {
	msg := err.Error()
	if loc := jetUnknown.FindStringIndex(msg); loc != nil {
		return fmt.Errorf("%s is not defined; scaffold templates see facts, data, environ (or Facts, Data, Environ) and the functions of docs/scaffold.md%s", msg[:loc[0]], msg[loc[1]:])
	}
	return err
}

// jetFuncs are CCM's Jet functions plus write and render.
func (r *renderer) jetFuncs() map[string]jet.Func {
	wrap := func(name string, f func(args ...any) (any, error)) jet.Func {
		return func(a jet.Arguments) reflect.Value {
			args := make([]any, a.NumOfArguments())
			for i := range args {
				if v := a.Get(i); v.IsValid() && v.CanInterface() {
					args[i] = v.Interface()
				}
			}
			v, err := f(args...)
			if err != nil {
				a.Panicf("%s: %v", name, err)
			}
			return reflect.ValueOf(v)
		}
	}
	str := func(args []any, i int, fn string) (string, error) {
		if i >= len(args) {
			return "", fmt.Errorf("%s takes %d arguments", fn, i+1)
		}
		s, ok := args[i].(string)
		if !ok {
			return "", fmt.Errorf("%s: argument %d must be a string, not %T", fn, i+1, args[i])
		}
		return s, nil
	}
	return map[string]jet.Func{
		"lookup": wrap("lookup", r.lookup),
		"readFile": wrap("readFile", func(args ...any) (any, error) {
			s, err := str(args, 0, "readFile")
			if err != nil {
				return nil, err
			}
			return r.readFile(s)
		}),
		"file": wrap("file", func(args ...any) (any, error) {
			s, err := str(args, 0, "file")
			if err != nil {
				return nil, err
			}
			return r.readFile(s)
		}),
		"template": wrap("template", func(args ...any) (any, error) {
			s, err := str(args, 0, "template")
			if err != nil {
				return nil, err
			}
			if !strings.HasSuffix(s, ".jet") {
				return nil, fmt.Errorf("only .jet files can be rendered here; ccm's manifest expressions do not run inside a scaffold (render a partial with render())")
			}
			return r.goJet(s)
		}),
		"kvGet":         wrap("kvGet", notSupported("kvGet")),
		"registrations": wrap("registrations", notSupported("registrations")),
		"write": wrap("write", func(args ...any) (any, error) {
			out, err := str(args, 0, "write")
			if err != nil {
				return nil, err
			}
			content, err := str(args, 1, "write")
			if err != nil {
				return nil, err
			}
			return "", r.write(out, content)
		}),
		"render": wrap("render", func(args ...any) (any, error) {
			name, err := str(args, 0, "render")
			if err != nil {
				return nil, err
			}
			var data any
			if len(args) > 1 {
				data = args[1]
			}
			return r.render(name, data)
		}),
	}
}

// render is the render function: another source file rendered with data,
// the same engine and delimiters, nested at most maxDepth deep.
func (r *renderer) render(name string, data any) (string, error) {
	rel, err := r.sourceRel(name)
	if err != nil {
		return "", err
	}
	if r.depth >= maxDepth {
		return "", fmt.Errorf("%w: render nested deeper than %d (max_depth); does a partial render itself?", errBudget, maxDepth)
	}
	r.depth++
	defer func() { r.depth-- }()
	if vm, ok := data.(jet.VarMap); ok {
		_ = vm
		data = r.env
	}
	out, err := r.renderFile(rel, data)
	if err != nil && errors.Is(err, errBudget) {
		// One line naming the limit, not one "rendering" per level.
		msg := err.Error()
		if i := strings.Index(msg, errBudget.Error()); i >= 0 {
			err = fmt.Errorf("%w%s (in %s)", errBudget, msg[i+len(errBudget.Error()):], path.Join(r.src, rel))
		}
	}
	return string(out), err
}

// sourceRel checks that name stays inside the source directory.
func (r *renderer) sourceRel(name string) (string, error) {
	rel := path.Clean("/" + name)[1:]
	if path.IsAbs(name) || rel == "" || rel != path.Clean(name) {
		return "", fmt.Errorf("%q is not in source directory %s", name, r.src)
	}
	return rel, nil
}

// write is the write function: an extra file in the target.
func (r *renderer) write(out, content string) error {
	rel := path.Clean("/" + out)[1:]
	if path.IsAbs(out) || rel == "" || rel != path.Clean(out) {
		return fmt.Errorf("write: %q is not in target directory %s", out, r.s.target)
	}
	if err := r.b.grow("write "+out, int64(len(content))); err != nil {
		return err
	}
	r.put(rel, []byte(content), "write()")
	return nil
}

// readFile is CCM's readFile/file: a file relative to the manifest's
// directory, read through the scope's fs_read grant.
func (r *renderer) readFile(name string) (string, error) {
	p := name
	if !path.IsAbs(p) {
		p = path.Join(r.workDir, path.Clean(p))
	}
	b, err := r.h.ReadFile(abi.FSReadRequest{Path: p, MaxBytes: maxFileBytes})
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", p, err)
	}
	if err := r.b.grow("readFile "+name, int64(len(b))); err != nil {
		return "", err
	}
	return string(b), nil
}

// goJet is CCM's jet function of Go templates: a Jet template (or a .jet
// file) rendered with [[ ]] or the delimiters given.
func (r *renderer) goJet(args ...any) (any, error) {
	var body, left, right string = "", "[[", "]]"
	ok := true
	switch len(args) {
	case 1:
		body, ok = args[0].(string)
	case 3:
		var ok1, ok2, ok3 bool
		body, ok1 = args[0].(string)
		left, ok2 = args[1].(string)
		right, ok3 = args[2].(string)
		ok = ok1 && ok2 && ok3
	default:
		return nil, fmt.Errorf("jet takes 1 or 3 string arguments")
	}
	if !ok {
		return nil, fmt.Errorf("jet takes string arguments")
	}
	name := "inline.jet"
	if strings.HasSuffix(body, ".jet") {
		name = body
		s, err := r.readFile(body)
		if err != nil {
			return nil, err
		}
		body = s
	}
	if r.depth >= maxDepth {
		return nil, fmt.Errorf("%w: jet nested deeper than %d (max_depth)", errBudget, maxDepth)
	}
	r.depth++
	defer func() { r.depth-- }()
	out, err := r.renderJet(name, body, r.env, left, right)
	return string(out), err
}

// lookup is CCM's lookup(key [, default]): a dotted path into facts, data
// and environ; a missing key without a default is an error.
func (r *renderer) lookup(args ...any) (any, error) {
	if len(args) == 0 || len(args) > 2 {
		return nil, errors.New("lookup takes a key and an optional default")
	}
	key, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("lookup: the key must be a string, not %T", args[0])
	}
	if strings.HasPrefix(key, "env.") {
		key = "environ." + strings.TrimPrefix(key, "env.")
	}
	var cur any = map[string]any{"facts": r.env["facts"], "data": r.env["data"], "environ": r.env["environ"]}
	found := true
	for _, part := range strings.Split(key, ".") {
		switch c := cur.(type) {
		case map[string]any:
			cur, found = c[part]
		case []any:
			i, ok := toInt(part)
			found = ok && i >= 0 && i < len(c)
			if found {
				cur = c[i]
			}
		default:
			found = false
		}
		if !found {
			break
		}
	}
	if !found {
		if len(args) == 2 && args[1] != nil {
			return args[1], nil
		}
		return nil, fmt.Errorf("missing key '%s' in environment", key)
	}
	return cur, nil
}
