package template

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// fn is the shape of every template function: expr passes the arguments
// as written and turns a non-nil error into the evaluation's error.
type fn = func(args ...any) (any, error)

// exprEnv is what a full template sees. Programs are compiled against the
// type and run against a value, which is what lets the program cache be
// shared across Expanders. The functions are fields (not expr.Function
// options) for the same reason: they reach the Expander through the value.
type exprEnv struct {
	Facts         map[string]any `expr:"Facts"`
	Data          map[string]any `expr:"Data"`
	Environ       map[string]any `expr:"Environ"` // values are strings; any so that Environ.X ?? "d" sees a missing X as nil
	Lookup        fn             `expr:"lookup"`
	ReadFile      fn             `expr:"readFile"`
	File          fn             `expr:"file"`
	Template      fn             `expr:"template"`
	Jet           fn             `expr:"jet"`
	KVGet         fn             `expr:"kvGet"`
	Registrations fn             `expr:"registrations"`
	Fetch         fn             `expr:"__ccm_fetch"`
	// budgetFns are + and the builtins that can build large strings,
	// bound to one evaluation's budget (budget.go).
	budgetFns
}

// hieraEnv is what Hiera expressions see (docs/manifests.md: only lookup
// and Facts during Hiera resolution).
type hieraEnv struct {
	Facts  map[string]any `expr:"Facts"`
	Lookup fn             `expr:"lookup"`
	budgetFns
}

// newEnv builds the variables and functions for expressions evaluated at
// a template() nesting depth.
func (x *Expander) newEnv(depth int) *exprEnv {
	return &exprEnv{
		Facts:         x.env.Facts,
		Data:          x.env.Data,
		Environ:       x.environ,
		Lookup:        x.lookupFn,
		ReadFile:      x.readFileFn,
		File:          x.readFileFn,
		Template:      func(args ...any) (any, error) { return x.templateFn(depth, args) },
		Jet:           func(args ...any) (any, error) { return x.jetFn(depth, args) },
		KVGet:         x.kvGetFn,
		Registrations: x.registrationsFn,
	}
}

// registrationsFn is registrations(cluster, protocol, service, address),
// with CCM's argument checks; "*" matches anything.
func (x *Expander) registrationsFn(args ...any) (any, error) {
	if x.env.Registrations == nil {
		return nil, fmt.Errorf("registrations: NATS registration lookups are %w here (ccm apply and ccm agent support them; see docs/registration.md)", ErrNotSupported)
	}
	if len(args) != 4 {
		return nil, fmt.Errorf("registrations requires 4 string arguments: cluster, protocol, service, address (\"*\" matches any), got %d", len(args))
	}
	var s [4]string
	for i, a := range args {
		v, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("registrations argument %d must be a string, not %T", i+1, a)
		}
		s[i] = v
	}
	v, err := x.env.Registrations(s[0], s[1], s[2], s[3])
	if err != nil {
		return nil, fmt.Errorf("registrations: %w", err)
	}
	return v, nil
}

// kvGetFn is kvGet(bucket, key), with CCM's argument checks.
func (x *Expander) kvGetFn(args ...any) (any, error) {
	if x.env.KVGet == nil {
		return nil, fmt.Errorf("kvGet: NATS key-value lookups are %w", ErrNotSupported)
	}
	if len(args) != 2 {
		return nil, fmt.Errorf("kvGet requires 2 string arguments: bucket, key")
	}
	var s [2]string
	for i, a := range args {
		v, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("kvGet argument %d must be a string", i+1)
		}
		s[i] = v
	}
	v, err := x.env.KVGet(s[0], s[1])
	if err != nil {
		return nil, fmt.Errorf("kvGet: %w", err)
	}
	return v, nil
}

// lookupFn is lookup(path) / lookup(path, default).
func (x *Expander) lookupFn(args ...any) (any, error) {
	if len(args) < 1 || len(args) > 2 {
		return nil, fmt.Errorf("lookup takes a path and an optional default, got %d arguments", len(args))
	}
	path, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("lookup: the path must be a string, not %T", args[0])
	}
	v, found, err := x.lookup(path)
	switch {
	case err != nil:
		return nil, err
	case found:
		return v, nil
	case len(args) == 2:
		return args[1], nil
	case x.lenient:
		return "", nil
	}
	return nil, fmt.Errorf("lookup %q: %w; check the path (roots are facts, data, environ) or give a default: lookup(%q, \"\")", path, ErrNotFound, path)
}

// lookup resolves path; found is false when nothing is there.
func (x *Expander) lookup(path string) (v any, found bool, err error) {
	doc, err := x.lookupDoc()
	if err != nil {
		return nil, false, err
	}
	// CCM's docs use env.X while its code only knows environ.X.
	if rest, ok := strings.CutPrefix(path, "env."); ok {
		path = "environ." + rest
	} else if path == "env" {
		path = "environ"
	}
	res := gjson.GetBytes(doc, path)
	if !res.Exists() {
		return nil, false, nil
	}
	return plain(res), true, nil
}

// plain converts a gjson result to plain values, integral numbers as int.
func plain(r gjson.Result) any {
	switch r.Type {
	case gjson.Number:
		return number(r.Raw, r.Num)
	case gjson.String:
		return r.Str
	case gjson.True:
		return true
	case gjson.False:
		return false
	case gjson.Null:
		return nil
	}
	if r.IsArray() {
		items := r.Array()
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = plain(it)
		}
		return out
	}
	if r.IsObject() {
		out := map[string]any{}
		r.ForEach(func(k, v gjson.Result) bool {
			out[k.String()] = plain(v)
			return true
		})
		return out
	}
	return r.Value()
}

func number(raw string, f float64) any {
	if i, err := strconv.ParseInt(raw, 10, 64); err == nil && i >= math.MinInt && i <= math.MaxInt {
		return int(i)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int(f)
	}
	return f
}

// readFileFn is readFile(path) / file(path): the file's contents.
func (x *Expander) readFileFn(args ...any) (any, error) {
	path, err := onePath("readFile", args)
	if err != nil {
		return nil, err
	}
	b, err := x.read(x.resolve(path))
	if err != nil {
		return nil, fmt.Errorf("readFile %q: %w", path, err)
	}
	return string(b), nil
}

// templateFn is template(s): a .templ file read and expanded, or s itself
// expanded.
func (x *Expander) templateFn(depth int, args []any) (any, error) {
	s, err := onePath("template", args)
	if err != nil {
		return nil, err
	}
	if depth+1 > maxDepth {
		return nil, fmt.Errorf("template: nested deeper than %d levels; does a template include itself?", maxDepth)
	}
	switch {
	case strings.HasSuffix(s, ".jet"):
		return x.jet(s, "", "", depth)
	case strings.HasSuffix(s, ".templ"):
		b, err := x.read(x.resolve(s))
		if err != nil {
			return nil, fmt.Errorf("template %q: %w", s, err)
		}
		v, err := x.expand(string(b), depth+1)
		if err != nil {
			return nil, fmt.Errorf("template %q: %w", s, err)
		}
		return v, nil
	}
	return x.expand(s, depth+1)
}

func onePath(name string, args []any) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("%s takes one argument, got %d", name, len(args))
	}
	s, ok := args[0].(string)
	if !ok {
		return "", fmt.Errorf("%s: the argument must be a string, not %T", name, args[0])
	}
	return s, nil
}

// resolve makes a relative path relative to the manifest directory.
func (x *Expander) resolve(path string) string {
	if filepath.IsAbs(path) || x.env.Dir == "" {
		return path
	}
	return filepath.Join(x.env.Dir, path)
}
