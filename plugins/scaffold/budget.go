package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Budgets of one scaffold render. The templates run inside the plugin, so
// the wasm memory limit (docs/plugins.md, "Limits") is the outer bound;
// these caps fail a runaway template with a message naming the limit long
// before it, as runtime/template does for manifest templates (same sizes).
const (
	// maxFileBytes is the largest file, or string value, one template may build.
	maxFileBytes = 16 << 20
	// maxTotalBytes is how much the whole tree may render, partials included.
	maxTotalBytes = 64 << 20
	// maxSteps is how many loop iterations and template calls one scaffold
	// may run, nested loops counted together.
	maxSteps = 1_000_000
	// maxDepth bounds render() nesting: a partial that renders itself fails.
	maxDepth = 10
	// maxRenderTime bounds how long one scaffold's templates may run, well
	// inside the host's call timeout (60 s): a built-in that overstays it
	// ends the whole ccm run (docs/plugins.md, "Limits"), so a template
	// looping over costly calls fails its resource instead. Checked at
	// every 16th loop iteration or template call.
	maxRenderTime = 30 * time.Second
	// maxSourceFiles bounds the source tree.
	maxSourceFiles = 10_000
	// maxNesting bounds the nesting of ( and [ inside one template action:
	// Jet's parser recurses on them without a limit, so a file of a million
	// parentheses would exhaust the plugin's memory before any budget ran.
	maxNesting = 1000
)

// checkNesting refuses a template whose actions (between left and right)
// nest ( or [ deeper than maxNesting, or whose blocks (if, range, with,
// block, define, try ... end) nest deeper than maxNesting: the parsers
// recurse on both, Jet's without a limit and slower than linearly, so a
// file of nested blocks would keep the plugin busy past its deadline.
func checkNesting(body, left, right string) error {
	blocks := 0
	for {
		i := strings.Index(body, left)
		if i < 0 {
			return nil
		}
		body = body[i+len(left):]
		end := strings.Index(body, right)
		action := body
		if end >= 0 {
			action, body = body[:end], body[end+len(right):]
		} else {
			body = ""
		}
		depth := 0
		for j := 0; j < len(action); j++ {
			switch action[j] {
			case '(', '[':
				if depth++; depth > maxNesting {
					return fmt.Errorf("%w: an expression nests ( or [ deeper than %d (max_nesting)", errBudget, maxNesting)
				}
			case ')', ']':
				depth--
			}
		}
		word := strings.TrimLeft(action, "- \t\r\n")
		if k := strings.IndexAny(word, " \t\r\n(-"); k >= 0 {
			word = word[:k]
		}
		switch word {
		case "if", "range", "with", "block", "define", "try":
			if blocks++; blocks > maxNesting {
				return fmt.Errorf("%w: blocks (if, range, ...) nest deeper than %d (max_nesting)", errBudget, maxNesting)
			}
		case "end":
			blocks--
		}
	}
}

// errBudget means a template went over one of the budgets above.
var errBudget = errors.New("template budget exceeded")

// budget counts what one scaffold render has built.
type budget struct {
	used    int64
	steps   int64
	ticks   int64
	started time.Time
}

// grow accounts for n more bytes built by what, failing before they are.
func (b *budget) grow(what string, n int64) error {
	if n > maxFileBytes {
		return fmt.Errorf("%w: %s would build %s, over the %d MiB one file or value may hold (max_file_bytes)", errBudget, what, size(n), maxFileBytes>>20)
	}
	if b.used+n > maxTotalBytes {
		return fmt.Errorf("%w: %s would bring what this scaffold rendered to %s, over the %d MiB one scaffold may render (max_total_bytes)", errBudget, what, size(b.used+n), maxTotalBytes>>20)
	}
	b.used += n
	return nil
}

// step counts n loop iterations or template calls.
func (b *budget) step(n int64) error {
	b.steps += n
	if n < 0 || b.steps > maxSteps {
		return fmt.Errorf("%w: over %d loop iterations and template calls in one scaffold (max_steps)", errBudget, maxSteps)
	}
	return b.tick()
}

// tick checks the render time at every 16th call.
func (b *budget) tick() error {
	if b.ticks++; b.ticks%16 != 0 {
		return nil
	}
	if b.started.IsZero() {
		b.started = time.Now()
	}
	if d := time.Since(b.started); d > maxRenderTime {
		return fmt.Errorf("%w: the templates ran for %s, over the %s one scaffold may take (max_render_time)", errBudget, d.Round(time.Second), maxRenderTime)
	}
	return nil
}

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// output is a file's bounded buffer: it refuses to grow past
// maxFileBytes, and counts every byte against the scaffold's total.
type output struct {
	buf  []byte
	b    *budget
	what string
	err  error
}

func (w *output) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if n := int64(len(w.buf)) + int64(len(p)); n > maxFileBytes {
		w.err = w.b.grow(w.what, n)
		return 0, w.err
	}
	if err := w.b.grow(w.what, int64(len(p))); err != nil {
		w.err = err
		return 0, err
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

var _ io.Writer = (*output)(nil)

// count is how many iterations ranging over v will make, or -1 when it
// cannot be known before (a channel, a function).
func count(v reflect.Value) int64 {
	for v.IsValid() && (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() {
		return 0
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return int64(v.Len())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() < 0 {
			return 0
		}
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if v.Uint() > maxSteps {
			return maxSteps + 1
		}
		return int64(v.Uint())
	}
	return -1
}

// repeat is strings.Repeat sized first.
func (b *budget) repeat(s string, n int) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("repeat: the count must not be negative, got %d", n)
	}
	if len(s) > 0 && n > maxFileBytes/len(s)+1 {
		return "", b.grow("repeat", maxFileBytes+1)
	}
	if err := b.grow("repeat", int64(len(s))*int64(n)); err != nil {
		return "", err
	}
	return strings.Repeat(s, n), nil
}

// replace is strings.Replace sized first (n < 0: every occurrence).
func (b *budget) replace(s, old, new string, n int) (string, error) {
	c := strings.Count(s, old)
	if n >= 0 && n < c {
		c = n
	}
	if err := b.grow("replace", int64(len(s))+int64(c)*(int64(len(new))-int64(len(old)))); err != nil {
		return "", err
	}
	return strings.Replace(s, old, new, n), nil
}

// toJSON encodes v once a lower bound of its size fits the budget.
func (b *budget) toJSON(what string, v any, indent string) (string, error) {
	if err := b.grow(what, jsonSize(reflect.ValueOf(v), 0)); err != nil {
		return "", err
	}
	var out []byte
	var err error
	if indent != "" {
		out, err = json.MarshalIndent(v, "", indent)
	} else {
		out, err = json.Marshal(v)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return string(out), nil
}

// jsonSize is a lower bound of v's JSON encoding; it stops counting past
// maxTotalBytes.
func jsonSize(v reflect.Value, depth int) int64 {
	v = indirectValue(v)
	if !v.IsValid() || depth > 100 {
		return 4
	}
	var n int64
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len()) + 2
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return int64(v.Len())*4/3 + 2
		}
		for i := 0; i < v.Len() && n <= maxTotalBytes; i++ {
			n += jsonSize(v.Index(i), depth+1) + 1
		}
		return n + 2
	case reflect.Map:
		it := v.MapRange()
		for it.Next() && n <= maxTotalBytes {
			n += jsonSize(it.Key(), depth+1) + jsonSize(it.Value(), depth+1) + 2
		}
		return n + 2
	}
	return 1
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
	case string:
		i, err := strconv.Atoi(n)
		return i, err == nil
	}
	rv := reflect.ValueOf(v)
	if rv.CanInt() {
		return int(rv.Int()), true
	}
	if rv.CanUint() {
		return int(rv.Uint()), true
	}
	return 0, false
}
