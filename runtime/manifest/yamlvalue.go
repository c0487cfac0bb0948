package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DecodeValue decodes one YAML or JSON document into plain Go values
// (map[string]any, []any, string, int, float64, bool, nil) with the same
// rules as manifests: aliases and merge keys resolved, duplicate keys
// rejected, non-string keys stringified, strings byte-exact. file is used
// in error messages. An empty document decodes to nil.
//
// Data and facts files use it so that every YAML input of a run follows
// one set of rules.
func DecodeValue(src []byte, file string) (any, error) {
	root, err := parseYAML(src, file)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, nil
	}
	d := newDecoder(len(src))
	v, err := d.value(root)
	if err != nil {
		return nil, atKey(file, err, "", root.Line)
	}
	return v, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML returns the content node of the only document in src, or nil
// when src holds no document. A document in the subset fastYAML reads is
// read by it; yaml.v3 reads any other.
func parseYAML(src []byte, file string) (*yaml.Node, error) {
	if n, ok := fastYAML(src); ok {
		return n, nil
	}
	return parseYAMLv3(src, file)
}

// parseYAMLv3 is parseYAML with yaml.v3 only.
func parseYAMLv3(src []byte, file string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(file, src, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(file, src, err)
	default:
		return nil, &Error{File: file, Line: next.Line, Err: fmt.Errorf("%w: more than one YAML document; keep one document per file", ErrSyntax)}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// syntaxError places a YAML syntax error at its line and column (see
// locate), with a hint and an excerpt of the source; when the position
// cannot be found it keeps the line yaml puts in its message.
func syntaxError(file string, src []byte, err error) error {
	if line, col, msg, ok := locate(src); ok {
		if n := lineCount(src); line > n {
			// goccy counts a comment's "\r\n" as two line ends
			// (FuzzParse/cf12c60edb45dd16): the last line, then.
			line, col = n, 0
		}
		e := &Error{File: file, Line: line, Column: col, Excerpt: excerpt(src, line, col)}
		lines := strings.Split(string(src), "\n")
		if hint := yamlHint(msg, lines[min(line, len(lines))-1]); hint != "" {
			msg += "; " + hint
		}
		e.Err = fmt.Errorf("%w: %s", ErrSyntax, msg)
		return e
	}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		col := 0
		if strings.HasPrefix(m[2], "mapping values are not allowed") {
			line, col = nextColon(src, line, 1)
		}
		return &Error{File: file, Line: line, Column: col, Excerpt: excerpt(src, line, col), Err: fmt.Errorf("%w: %s", ErrSyntax, m[2])}
	}
	return &Error{File: file, Err: fmt.Errorf("%w: %w", ErrSyntax, err)}
}

// decoder walks yaml nodes. It bounds the work an alias bomb can cause and
// detects aliases that refer to a node containing them.
type decoder struct {
	budget int                 // nodes left to decode
	active map[*yaml.Node]bool // anchored nodes being decoded; created on the first anchor
}

func newDecoder(srcLen int) *decoder {
	// Without aliases a document cannot decode to more nodes than it has
	// bytes; the factor leaves room for ordinary alias reuse.
	return &decoder{budget: 10_000 + 100*srcLen}
}

// pair is one key of a mapping after aliases and merge keys are resolved.
type pair struct {
	key   string
	keyN  *yaml.Node // for the key's line
	value *yaml.Node // alias already resolved
}

func (d *decoder) spend(n *yaml.Node) error {
	d.budget--
	if d.budget < 0 {
		return &valueError{line: n.Line, err: fmt.Errorf("%w: document expands to too many values (alias bomb?)", ErrInvalid)}
	}
	return nil
}

// resolve follows an alias to the node it names.
func (d *decoder) resolve(n *yaml.Node) (*yaml.Node, error) {
	for hops := 0; n.Kind == yaml.AliasNode; hops++ {
		if n.Alias == nil || hops > 100 {
			return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: alias *%s names no anchor", ErrInvalid, n.Value)}
		}
		n = n.Alias
	}
	return n, nil
}

// enter marks an anchored node as being decoded, failing if it already
// is: an alias inside a node that refers to that node would never end.
func (d *decoder) enter(n *yaml.Node) error {
	if n.Anchor == "" {
		return nil
	}
	if d.active[n] {
		return &valueError{line: n.Line, err: fmt.Errorf("%w: anchor &%s contains an alias to itself", ErrInvalid, n.Anchor)}
	}
	if d.active == nil {
		d.active = map[*yaml.Node]bool{}
	}
	d.active[n] = true
	return nil
}

func (d *decoder) leave(n *yaml.Node) {
	if n.Anchor != "" {
		delete(d.active, n)
	}
}

// value decodes n into plain Go values.
func (d *decoder) value(n *yaml.Node) (any, error) {
	n, err := d.resolve(n)
	if err != nil {
		return nil, err
	}
	if err := d.spend(n); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.MappingNode:
		if err := d.enter(n); err != nil {
			return nil, err
		}
		defer d.leave(n)
		pairs, err := d.pairs(n)
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, len(pairs))
		for _, p := range pairs {
			v, err := d.value(p.value)
			if err != nil {
				return nil, under(err, p.key)
			}
			m[p.key] = v
		}
		return m, nil
	case yaml.SequenceNode:
		if err := d.enter(n); err != nil {
			return nil, err
		}
		defer d.leave(n)
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := d.value(c)
			if err != nil {
				return nil, under(err, index(i))
			}
			l[i] = v
		}
		return l, nil
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0])
	}
	return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: unsupported YAML node kind %d", ErrInvalid, n.Kind)}
}

// pairs lists the keys of mapping n: explicit keys in order, then keys from
// merge keys (`<<: *base`) that are not explicit, earlier merge sources
// winning as YAML specifies. Duplicate explicit keys are an error.
func (d *decoder) pairs(n *yaml.Node) ([]pair, error) {
	out := make([]pair, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2) // key -> line
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := d.resolve(n.Content[i])
		if err != nil {
			return nil, err
		}
		v, err := d.resolve(n.Content[i+1])
		if err != nil {
			return nil, err
		}
		if isMerge(k) {
			merges = append(merges, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, &valueError{line: k.Line, err: fmt.Errorf("%w: map keys must be scalars, not a list or map", ErrInvalid)}
		}
		// Non-string keys (1, true) keep the text the author wrote.
		key := k.Value
		if first, dup := seen[key]; dup {
			return nil, &valueError{line: k.Line, err: fmt.Errorf("%w: key %q repeated; first at line %d", ErrDuplicate, key, first)}
		}
		seen[key] = k.Line
		out = append(out, pair{key: key, keyN: k, value: v})
	}
	for _, m := range merges {
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			src, err := d.resolve(src)
			if err != nil {
				return nil, err
			}
			if src.Kind != yaml.MappingNode {
				return nil, &valueError{line: src.Line, err: fmt.Errorf("%w: merge key << needs a map or a list of maps", ErrInvalid)}
			}
			if err := d.spend(src); err != nil {
				return nil, err
			}
			if err := d.enter(src); err != nil {
				return nil, err
			}
			merged, err := d.pairs(src)
			d.leave(src)
			if err != nil {
				return nil, err
			}
			for _, p := range merged {
				if _, dup := seen[p.key]; dup {
					continue
				}
				seen[p.key] = p.keyN.Line
				out = append(out, p)
			}
		}
	}
	return out, nil
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.ShortTag() == "!!merge")
}

// scalar decodes a scalar node. Strings are the node text as YAML defines
// it (block scalars included), so content survives byte for byte.
func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!merge":
		// Timestamps stay text: a date in a manifest is data for a
		// resource, not a time.Time.
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: %q is not a valid %s", ErrInvalid, n.Value, n.ShortTag()[2:])}
		}
		return plainNumber(v), nil
	case "!!binary":
		var s string
		if err := n.Decode(&s); err != nil {
			return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: !!binary value is not valid base64", ErrInvalid)}
		}
		return s, nil
	}
	// Application tags (!vault, !secret) carry no meaning here: keep the text.
	return n.Value, nil
}

// plainNumber narrows yaml's number types to int and float64.
func plainNumber(v any) any {
	switch x := v.(type) {
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			return int(x)
		}
		return float64(x)
	case uint64:
		if x <= math.MaxInt {
			return int(x)
		}
		return float64(x)
	case uint:
		if x <= math.MaxInt {
			return int(x)
		}
		return float64(x)
	case float32:
		return float64(x)
	}
	return v
}
