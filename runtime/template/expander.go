package template

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Env is what templates can see.
type Env struct {
	Facts   map[string]any
	Data    map[string]any
	Environ map[string]string
	Dir     string // directory for relative readFile/file/template paths; "" is the working directory
	// ReadFile reads every file a template names (readFile, file, .templ
	// and .jet files, jet includes); nil is os.ReadFile. The engine passes
	// one that checks the manifest scope's fs_read grant, so a vendor's
	// templates cannot read what its plugins may not.
	ReadFile func(path string) ([]byte, error)
	// NoEnviron says Environ is empty on purpose (a scope confined by
	// grants sees no environment), so that a missing variable's error
	// says why rather than suggesting a typo.
	NoEnviron bool
	// KVGet answers kvGet(bucket, key) (CCM's, docs/remote.md): a NATS
	// key-value value as a string, an error for a missing key. nil: kvGet
	// fails with ErrNotSupported.
	KVGet func(bucket, key string) (string, error)
	// Registrations answers registrations(cluster, protocol, service,
	// address) (CCM's, docs/registration.md): the matching entries, a list
	// whose items have Cluster, Service, Protocol, Address, Port,
	// Priority, Annotations and TTL and which has a PrometheusFileSD()
	// method; the value is passed through as it is. nil: registrations
	// fails with ErrNotSupported.
	Registrations func(cluster, protocol, service, address string) (any, error)
}

// maxDepth bounds template() recursion: a .templ file that includes itself
// must fail, not overflow the stack.
const maxDepth = 10

// Expander expands templates against one Env. It is safe for concurrent
// use; build one per manifest (or per resource when data differs) with New.
type Expander struct {
	env     Env
	hiera   bool     // Hiera mode: only Facts and lookup
	lenient bool     // a missing key or lookup gives nil or "" (Hiera order entries only)
	root    *exprEnv // depth-0 variables and functions, built once
	hroot   *hieraEnv
	keys    *Expander      // the lenient twin Key uses (Hiera only)
	environ map[string]any // env.Environ as expressions see it

	lookupOnce sync.Once
	lookupJSON []byte // {"facts":…,"data":…,"environ":…}, marshalled on first lookup
	lookupErr  error
}

// New returns an Expander over env.
func New(env Env) *Expander {
	x := &Expander{env: env, environ: make(map[string]any, len(env.Environ))}
	for k, v := range env.Environ {
		x.environ[k] = v
	}
	x.root = x.newEnv(0)
	return x
}

// NewHiera returns an Expander for Hiera resolution (docs/manifests.md,
// "Hierarchy"): only Facts and lookup exist. Its values are
// strict like every other template; only Key, for order entries, lets a
// missing fact or lookup give "", so that an entry naming an absent fact
// is simply skipped.
func NewHiera(facts map[string]any) *Expander {
	x := newHiera(facts, false)
	x.keys = newHiera(facts, true)
	return x
}

func newHiera(facts map[string]any, lenient bool) *Expander {
	x := &Expander{env: Env{Facts: facts}, hiera: true, lenient: lenient}
	x.hroot = &hieraEnv{Facts: facts, Lookup: x.lookupFn}
	return x
}

// Expand expands every string inside v (maps and lists recursively) and
// returns new values; v is not mutated. A string that is exactly one
// expression (surrounding whitespace allowed) yields the expression's
// native value; other values (numbers, booleans, nil) are kept. Map keys
// are not expanded. An error names the key path of the failing string.
func (x *Expander) Expand(v any) (any, error) {
	return x.expand(v, 0)
}

func (x *Expander) expand(v any, depth int) (any, error) {
	switch t := v.(type) {
	case string:
		if !HasTemplate(t) {
			return v, nil
		}
		return x.value(t, depth)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			r, err := x.expand(e, depth)
			if err != nil {
				return nil, at(err, k)
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			r, err := x.expand(e, depth)
			if err != nil {
				return nil, at(err, index(i))
			}
			out[i] = r
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(t))
		for k, e := range t {
			r, err := x.text(e, depth)
			if err != nil {
				return nil, at(err, k)
			}
			out[k] = r
		}
		return out, nil
	case []string:
		out := make([]string, len(t))
		for i, e := range t {
			r, err := x.text(e, depth)
			if err != nil {
				return nil, at(err, index(i))
			}
			out[i] = r
		}
		return out, nil
	}
	return v, nil
}

// String expands s and always renders text, even when s is a single
// expression giving a list or number.
func (x *Expander) String(s string) (string, error) {
	return x.text(s, 0)
}

// Bool evaluates a bare expression (control.if, control.unless: no
// "{{ }}" around it) that must give a boolean.
func (x *Expander) Bool(expr string) (bool, error) {
	src := strings.TrimSpace(expr)
	if src == "" {
		return false, fmt.Errorf("empty control expression; write one such as Data.enabled == true")
	}
	v, err := x.eval(src, 0)
	if err != nil {
		if segs, serr := scan(src); serr == nil {
			if inner, ok := single(segs); ok {
				return false, fmt.Errorf("%w; control expressions are bare, write %q without the {{ }} or ${ }", err, inner)
			}
		}
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%w: expression %q gave %s; compare it, e.g. %s == \"yes\"", ErrNotBool, clip(src), describe(v), clip(src))
	}
	return b, nil
}

// Lookup resolves a GJSON path on {"facts":…, "data":…, "environ":…}, as
// the lookup() function does; "env." is an alias of "environ.". Integral
// numbers come back as int.
func (x *Expander) Lookup(path string) (any, bool) {
	v, ok, err := x.lookup(path)
	if err != nil {
		return nil, false
	}
	return v, ok
}

// Key renders one Hiera order entry. ok is false when the entry has
// expressions and none of them produced a non-empty value, so that
// "env:${ lookup('facts.env') }" does not select "env:" when the fact is
// missing; an entry without expressions always counts.
func (x *Expander) Key(s string) (key string, ok bool, err error) {
	if x.keys != nil {
		x = x.keys
	}
	if !HasTemplate(s) {
		return s, true, nil
	}
	t, err := parse(s)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, sg := range t.segs {
		if !sg.isExpr {
			b.WriteString(sg.text)
			continue
		}
		v, err := x.eval(sg.text, 0)
		if err != nil {
			return "", false, err
		}
		t := render(v)
		ok = ok || t != ""
		b.WriteString(t)
	}
	return b.String(), ok, nil
}

// value expands s, giving the native value of a lone expression.
func (x *Expander) value(s string, depth int) (any, error) {
	t, err := parse(s)
	if err != nil {
		return nil, err
	}
	if t.isOne {
		v, err := x.eval(t.single, depth)
		if str, ok := v.(string); ok && err == nil && len(t.segs) > 1 {
			// A string result keeps the whitespace written around the
			// expression: content: "{{ Data.motd }}\n" ends with a newline.
			// Other types are native values, whitespace or not.
			return surround(t.segs, str), nil
		}
		return v, err
	}
	return x.join(t.segs, depth)
}

// surround renders segs with v in place of their one expression.
func surround(segs []segment, v string) string {
	var b strings.Builder
	for _, sg := range segs {
		if sg.isExpr {
			b.WriteString(v)
		} else {
			b.WriteString(sg.text)
		}
	}
	return b.String()
}

// text expands s into text.
func (x *Expander) text(s string, depth int) (string, error) {
	if !HasTemplate(s) {
		return s, nil
	}
	t, err := parse(s)
	if err != nil {
		return "", err
	}
	return x.join(t.segs, depth)
}

func (x *Expander) join(segs []segment, depth int) (string, error) {
	var b strings.Builder
	for _, sg := range segs {
		if !sg.isExpr {
			b.WriteString(sg.text)
			continue
		}
		v, err := x.eval(sg.text, depth)
		if err != nil {
			return "", err
		}
		t, err := renderSized(v, b.Len())
		if err != nil {
			return "", err
		}
		b.WriteString(t)
	}
	return b.String(), nil
}

// eval runs one expression at a template() nesting depth.
func (x *Expander) eval(src string, depth int) (any, error) {
	p, err := compile(src, x.hiera, x.lenient)
	if err != nil {
		return nil, err
	}
	// Each evaluation gets its own budget: a copy of the env with the
	// budgeted functions bound to it (pooled, see evalState).
	st := getEvalState()
	defer putEvalState(st)
	if x.hiera {
		st.hiera = *x.hroot
		st.hiera.budgetFns = st.fns
		return run(p, src, &st.hiera)
	}
	if depth > 0 {
		st.env = *x.newEnv(depth)
	} else {
		st.env = *x.root
	}
	st.env.budgetFns = st.fns
	v, err := run(p, src, &st.env)
	if err != nil {
		return nil, x.confined(err)
	}
	return v, nil
}

// lookupDoc returns the JSON document lookup paths apply to.
func (x *Expander) lookupDoc() ([]byte, error) {
	x.lookupOnce.Do(func() {
		doc := map[string]any{"facts": orEmpty(x.env.Facts)}
		if !x.hiera {
			doc["data"] = orEmpty(x.env.Data)
			env := x.env.Environ
			if env == nil {
				env = map[string]string{}
			}
			doc["environ"] = env
		}
		x.lookupJSON, x.lookupErr = json.Marshal(doc)
		if x.lookupErr != nil {
			x.lookupErr = fmt.Errorf("lookup: facts or data cannot be turned into JSON: %w", x.lookupErr)
		}
	})
	return x.lookupJSON, x.lookupErr
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// describe names a value and its kind for error messages.
func describe(v any) string {
	switch t := v.(type) {
	case nil:
		return "nil"
	case string:
		return fmt.Sprintf("the string %q", clip(t))
	}
	return fmt.Sprintf("%T %s", v, clip(render(v)))
}

// read reads a file a template names, through Env.ReadFile when set.
func (x *Expander) read(path string) ([]byte, error) {
	if x.env.ReadFile != nil {
		return x.env.ReadFile(path)
	}
	return os.ReadFile(path)
}
