package template

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/CloudyKit/jet/v6"
)

// Default Jet delimiters (docs/manifests.md): not Jet's own {{ }}, so that
// a Jet template can emit CCM {{ }} templates for the second expansion.
const (
	JetLeft  = "[["
	JetRight = "]]"
)

// jetInline names a Jet template given as text in error messages.
const jetInline = "inline.jet"

// Jet renders the Jet template s with delimiters left and right ("" means
// the defaults [[ and ]]). When s ends in ".jet" it names a file, read
// relative to Env.Dir; otherwise s is the template text. Errors name the
// file (or "inline.jet") and the line.
func (x *Expander) Jet(s, left, right string) (string, error) {
	return x.jet(s, left, right, 0)
}

func (x *Expander) jet(s, left, right string, depth int) (string, error) {
	if left == "" {
		left = JetLeft
	}
	if right == "" {
		right = JetRight
	}
	if depth+1 > maxDepth {
		return "", fmt.Errorf("jet: nested deeper than %d levels; does a template include itself?", maxDepth)
	}
	name, shown, src, dir := jetInline, jetInline, s, x.env.Dir
	if strings.HasSuffix(s, ".jet") {
		path := x.resolve(s)
		b, err := x.read(path)
		if err != nil {
			return "", fmt.Errorf("jet %q: %w", s, err)
		}
		// Jet resolves includes and imports relative to the including
		// template, so the loader is rooted at the file's directory.
		name, shown, src, dir = filepath.Base(path), s, string(b), filepath.Dir(path)
	}
	if dir == "" {
		dir = "."
	}
	// Every template this render parses, includes too, is rewritten for
	// the render's budget (jetbudget.go).
	rw := &jetRewriter{}
	set := jet.NewSet(&jetLoader{dir: dir, x: x},
		jet.WithDelims(left, right),
		// Jet HTML-escapes by default; the output is YAML or a config
		// file, where &amp; would be corruption.
		jet.WithSafeWriter(nil),
		// Templates Jet loads itself (include, import, extends) pass
		// through the cache, where they get the strict patch and the
		// budget rewrite too.
		jet.WithCache(&rewritingCache{w: rw, m: map[string]*jet.Template{}}),
	)
	t, err := parseJet(set, name, src)
	if err != nil {
		return "", jetError(shown, err)
	}
	strictJet(t)
	rw.template(t)
	b := &budget{}
	vars := x.jetVars(depth)
	vars.SetFunc(jetFetchName, x.jetGet("/"+name, shown))
	b.jetBudget(vars)
	out := &boundedWriter{b: b, what: "Jet output"}
	if err := executeJet(t, out, vars); err != nil {
		return "", jetError(shown, err)
	}
	if out.err != nil {
		// Jet ignores some write errors; the budget's is final.
		return "", jetError(shown, out.err)
	}
	return out.sb.String(), nil
}

// parseJet parses src, turning a parser panic into an error: a manifest
// must not be able to crash the run.
func parseJet(set *jet.Set, name, src string) (t *jet.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("the Jet parser failed: %v", r)
		}
	}()
	return set.Parse("/"+name, src)
}

// executeJet runs t; Jet re-panics Go runtime errors (nil maps, bad
// indexes) from inside templates, which must not crash the run either.
func executeJet(t *jet.Template, b io.Writer, vars jet.VarMap) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the Jet evaluator failed: %v", r)
		}
	}()
	return t.Execute(b, vars, nil)
}

// jetVars is what a Jet template sees: the variables under both spellings
// and the template functions.
func (x *Expander) jetVars(depth int) jet.VarMap {
	facts, data := orEmpty(x.env.Facts), orEmpty(x.env.Data)
	environ := x.env.Environ
	if environ == nil {
		environ = map[string]string{}
	}
	vars := jet.VarMap{}
	vars.Set("Facts", facts).Set("facts", facts)
	vars.Set("Data", data).Set("data", data)
	vars.Set("Environ", environ).Set("environ", environ)
	env := x.newEnv(depth + 1)
	fns := map[string]fn{
		"lookup":        env.Lookup,
		"readFile":      env.ReadFile,
		"file":          env.File,
		"template":      env.Template,
		"kvGet":         env.KVGet,
		"registrations": env.Registrations,
	}
	for name, f := range fns {
		vars.SetFunc(name, jetFunc(f))
	}
	return vars
}

// jetFunc adapts a template function to Jet's calling convention, where
// an error is a panic that Execute turns back into an error.
func jetFunc(f fn) jet.Func {
	return func(a jet.Arguments) reflect.Value {
		args := make([]any, a.NumOfArguments())
		for i := range args {
			if v := a.Get(i); v.IsValid() && v.CanInterface() {
				args[i] = v.Interface()
			}
		}
		out, err := f(args...)
		if err != nil {
			panic(err)
		}
		if out == nil {
			// An invalid reflect.Value prints as "<invalid Value>".
			return reflect.ValueOf("")
		}
		return reflect.ValueOf(out)
	}
}

var (
	// Jet lists every variable in scope, values' types included, after an
	// unknown identifier: noise on one error line.
	jetUnknownIdent = regexp.MustCompile(` not available in current \(.*\) or parent scope, global, or default variables$`)
	jetRuntimeLine  = regexp.MustCompile(`^Jet Runtime Error \("[^"]*":(\d+)\): `)
	jetParseLine    = regexp.MustCompile(`^template: [^:]*:(\d+): `)
)

// jetError rewrites Jet's two error styles ("Jet Runtime Error
// ("/x.jet":3): ..." and "template: /x.jet:3: ...") as "x.jet:3: ...".
func jetError(name string, err error) error {
	var inner *jetErr
	if errors.As(err, &inner) {
		// A nested jet()/template() failed: its file and line say more
		// than the outer template's name repeated per level.
		return err
	}
	msg := err.Error()
	for _, re := range []*regexp.Regexp{jetRuntimeLine, jetParseLine} {
		if m := re.FindStringSubmatchIndex(msg); m != nil {
			line := msg[m[2]:m[3]]
			rest := jetUnknownIdent.ReplaceAllLiteralString(msg[m[1]:], " is not defined; Jet sees Facts, Data, Environ (or facts, data, environ) and lookup, readFile, file, template")
			return &jetErr{where: name + ":" + line, msg: rest, err: err}
		}
	}
	return &jetErr{where: name, msg: msg, err: err}
}

// jetErr keeps the original error reachable for errors.Is (a function's
// ErrNotFound, say) while printing one clean line.
type jetErr struct {
	where, msg string
	err        error
}

func (e *jetErr) Error() string { return "jet " + e.where + ": " + e.msg }
func (e *jetErr) Unwrap() error { return e.err }

// jetFn is jet(s) / jet(s, left, right) in expressions.
func (x *Expander) jetFn(depth int, args []any) (any, error) {
	if len(args) != 1 && len(args) != 3 {
		return nil, fmt.Errorf("jet takes a template (or .jet file) and optionally the left and right delimiters, got %d arguments", len(args))
	}
	strs := make([]string, 3)
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("jet: argument %d must be a string, not %T", i+1, a)
		}
		strs[i] = s
	}
	if len(args) == 3 && (strs[1] == "" || strs[2] == "") {
		return nil, fmt.Errorf("jet: the delimiters must not be empty; leave both out for [[ ]]")
	}
	return x.jet(strs[0], strs[1], strs[2], depth)
}

// jetLoader serves Jet's includes and imports through the Expander's
// reader, so they are grant-checked like every other template file read.
type jetLoader struct {
	dir string
	x   *Expander
}

func (l *jetLoader) path(name string) string {
	return filepath.Join(l.dir, filepath.FromSlash(name))
}

// Exists only stats (Jet probes candidate paths with it); reading, and so
// the grant check, happens in Open.
func (l *jetLoader) Exists(name string) bool {
	fi, err := os.Stat(l.path(name))
	return err == nil && !fi.IsDir()
}

func (l *jetLoader) Open(name string) (io.ReadCloser, error) {
	b, err := l.x.read(l.path(name))
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}
