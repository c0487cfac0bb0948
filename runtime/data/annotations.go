package data

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/ccm-dev/ccm/runtime/manifest"
)

// Sentinels wrapped by every violation CheckAnnotations reports, so that
// callers can tell them apart with errors.Is.
var (
	// ErrRequired means a @require key is missing, null or "".
	ErrRequired = errors.New("@require failed")
	// ErrValidate means a @validate expression is false, fails to run or
	// does not compile.
	ErrValidate = errors.New("@validate failed")
)

// CheckAnnotations checks final, the fully merged data of a run (manifest,
// overrides, --hiera source and --data already applied), against anns
// (docs/manifests.md). file names the source of anns in messages.
//
// It returns every violation joined with errors.Join, each a
// *manifest.Error reading "FILE:LINE: data.path: problem" and wrapping
// ErrRequired or ErrValidate, and a warning for each unknown @word.
//
// Rules:
//   - @require (alias @required): the value must not be nil or ""; false
//     and 0 pass; a missing key is nil;
//   - @validate EXPR: an expr-lang expression over `value` must be true.
//     It is skipped when the value is nil or its @require failed, and for
//     maps and lists; other non-strings are stringified first ("80",
//     "true"), so `value` is always a string. Validators: see
//     validatorOptions. A bad expression is reported even when skipped;
//   - values are never echoed in messages: data often holds secrets.
//
// Each path's @require is checked before its @validate whatever their
// order in the comment.
func CheckAnnotations(file string, anns []manifest.Annotation, final map[string]any) (warnings []string, err error) {
	c := checker{file: file, programs: map[string]*vm.Program{}, opts: validatorOptions()}
	var errs []error
	for _, group := range byPath(anns) {
		value := lookup(final, group[0].Path)
		failed := false
		for _, a := range group {
			if a.Directive == manifest.DirectiveRequire && (value == nil || value == "") {
				errs = append(errs, c.violation(a, fmt.Errorf("%w: the value is missing or empty; set it in data, an override, --hiera or --data", ErrRequired)))
				failed = true
				break
			}
		}
		for _, a := range group {
			switch a.Directive {
			case manifest.DirectiveRequire:
			case manifest.DirectiveValidate:
				if e := c.validate(a, value, failed); e != nil {
					errs = append(errs, c.violation(a, e))
				}
			default:
				warnings = append(warnings, fmt.Sprintf("%s:%d: %s: unknown directive @%s ignored; use @require or @validate", file, a.Line, dataPath(a.Path), a.Directive))
			}
		}
	}
	return warnings, errors.Join(errs...)
}

// checker holds what every check of one CheckAnnotations call shares.
type checker struct {
	file     string
	programs map[string]*vm.Program // by expression: one compile per distinct text
	opts     []expr.Option
}

func (c *checker) violation(a manifest.Annotation, err error) error {
	return &manifest.Error{File: c.file, Line: a.Line, Subject: dataPath(a.Path), Err: err}
}

// validate runs a's expression over value; requireFailed reports that the
// path's @require already failed.
func (c *checker) validate(a manifest.Annotation, value any, requireFailed bool) error {
	if a.Arg == "" {
		return fmt.Errorf("%w: no expression; write one such as @validate isIP(value)", ErrValidate)
	}
	p, err := c.compile(a.Arg)
	if err != nil {
		return fmt.Errorf("%w: expression %q does not compile: %w; fix the expression", ErrValidate, a.Arg, err)
	}
	s, ok := stringify(value)
	if !ok || requireFailed {
		return nil
	}
	out, err := expr.Run(p, map[string]any{"value": s})
	if err != nil {
		return fmt.Errorf("%w: %s: %w; fix the expression", ErrValidate, a.Arg, err)
	}
	if b, _ := out.(bool); !b {
		return fmt.Errorf("%w: %s is false for this value; fix the value or the expression", ErrValidate, a.Arg)
	}
	return nil
}

func (c *checker) compile(src string) (*vm.Program, error) {
	if p, ok := c.programs[src]; ok {
		return p, nil
	}
	opts := append([]expr.Option{expr.Env(map[string]any{"value": ""}), expr.AsBool()}, c.opts...)
	p, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, err
	}
	c.programs[src] = p
	return p, nil
}

// stringify turns a scalar into the string @validate sees; ok is false for
// nil, maps and lists, which are not validated.
func stringify(v any) (s string, ok bool) {
	switch x := v.(type) {
	case nil, map[string]any, []any:
		return "", false
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return fmt.Sprint(v), true
}

// byPath groups annotations by path, keeping the order of first
// appearance so that messages follow the document.
func byPath(anns []manifest.Annotation) [][]manifest.Annotation {
	var groups [][]manifest.Annotation
	index := map[string]int{}
	for _, a := range anns {
		k := fmt.Sprintf("%q", a.Path) // quoting keeps ["a.b"] apart from ["a","b"]
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], a)
	}
	return groups
}

// lookup returns the value at path in m, or nil when any key is missing or
// an intermediate value is not a map.
func lookup(m map[string]any, path []string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func dataPath(path []string) string { return "data." + strings.Join(path, ".") }
