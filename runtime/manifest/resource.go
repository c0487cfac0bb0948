package manifest

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Resource is one declared resource with `defaults` applied.
type Resource struct {
	Type string // e.g. "file"
	Name string // raw: may hold a template
	Line int    // 1-based line of the resource in the file

	// Properties holds the type-specific properties, "ensure" included when
	// given; never name or a common property. Never nil.
	Properties map[string]any

	Alias, Provider    string
	Require, Subscribe []string // raw "type#name" strings, each valid for ParseRef
	Control            Control
	HealthChecks       []HealthCheck
	// RegisterWhenStable holds the register_when_stable entries, raw
	// (templates unexpanded), each with its keys checked.
	RegisterWhenStable []map[string]any
	// HasSubscribe is true when the subscribe key is present, even empty,
	// so that types without refresh can reject it.
	HasSubscribe bool
}

// Control holds the bare Expr expressions gating a resource; empty means
// unset.
type Control struct{ If, Unless string }

// resources decodes the ccm.resources list.
func (p *parser) resources(n *yaml.Node) ([]Resource, error) {
	line := n.Line
	n, err := p.d.resolve(n)
	if err != nil {
		return nil, atKey(p.file, err, p.listName(), line)
	}
	if n.Kind != yaml.SequenceNode {
		return nil, &Error{File: p.file, Line: n.Line, Subject: p.listName(), Err: fmt.Errorf("%w: must be a list of one-key maps such as - file: [...]", ErrInvalid)}
	}
	var out []Resource
	for i, item := range n.Content {
		subject := p.listName() + index(i)
		item, err := p.d.resolve(item)
		if err != nil {
			return nil, atKey(p.file, err, subject, n.Line)
		}
		if item.Kind != yaml.MappingNode {
			return nil, &Error{File: p.file, Line: item.Line, Subject: subject, Err: fmt.Errorf("%w: each item is a map with one key, the resource type, such as - file: [...]", ErrInvalid)}
		}
		pairs, err := p.d.pairs(item)
		if err != nil {
			return nil, atKey(p.file, err, subject, item.Line)
		}
		if len(pairs) != 1 {
			return nil, &Error{File: p.file, Line: item.Line, Subject: subject, Err: fmt.Errorf("%w: has %d keys; each item has exactly one key, the resource type; start a new - item per type", ErrInvalid, len(pairs))}
		}
		typ, body := pairs[0].key, pairs[0].value
		typeLine := pairs[0].keyN.Line
		if !validType(typ) {
			return nil, &Error{File: p.file, Line: typeLine, Subject: subject, Err: fmt.Errorf("%w: resource type %q must be lowercase letters, digits and '_' starting with a letter", ErrInvalid, typ)}
		}
		switch body.Kind {
		case yaml.SequenceNode:
			rs, err := p.listForm(typ, body, subject)
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
		case yaml.MappingNode:
			r, err := p.directForm(typ, body, typeLine, subject)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		default:
			return nil, &Error{File: p.file, Line: typeLine, Subject: subject + "." + typ, Err: fmt.Errorf("%w: expected a list of name: {properties} entries, or a properties map with name", ErrInvalid)}
		}
	}
	return out, nil
}

// entry is one list-form item before defaults are applied.
type entry struct {
	name  string
	line  int
	props []pair
}

// listForm expands `- type: [ - name: {props}, ... ]`, applying the block's
// `defaults` entry (at most one, anywhere in the block, this block only).
func (p *parser) listForm(typ string, n *yaml.Node, subject string) ([]Resource, error) {
	var (
		defaults     []pair
		defaultsLine int
		entries      = make([]entry, 0, len(n.Content))
	)
	for j, item := range n.Content {
		at := subject + "." + typ + index(j)
		item, err := p.d.resolve(item)
		if err != nil {
			return nil, atKey(p.file, err, at, n.Line)
		}
		if item.Kind != yaml.MappingNode {
			return nil, &Error{File: p.file, Line: item.Line, Subject: at, Err: fmt.Errorf("%w: each entry is a one-key map name: {properties}, such as - /usr/bin/true: {}", ErrInvalid)}
		}
		pairs, err := p.d.pairs(item)
		if err != nil {
			return nil, atKey(p.file, err, at, item.Line)
		}
		if len(pairs) != 1 {
			return nil, &Error{File: p.file, Line: item.Line, Subject: at, Err: fmt.Errorf("%w: has %d keys; each entry is a one-key map name: {properties}; indent the properties under the name", ErrInvalid, len(pairs))}
		}
		kv := pairs[0]
		props, err := p.propPairs(kv.value)
		if err != nil {
			return nil, atResource(p.file, err, typ+"#"+kv.key, kv.keyN.Line)
		}
		if kv.key == "defaults" {
			if defaults != nil || defaultsLine != 0 {
				return nil, &Error{File: p.file, Line: kv.keyN.Line, Subject: at, Err: fmt.Errorf("%w: second defaults entry in this block; first at line %d; merge them into one", ErrDuplicate, defaultsLine)}
			}
			defaults, defaultsLine = props, kv.keyN.Line
			if defaults == nil {
				defaults = []pair{}
			}
			continue
		}
		if kv.key == "" {
			return nil, &Error{File: p.file, Line: kv.keyN.Line, Subject: at, Err: fmt.Errorf("%w: empty resource name", ErrInvalid)}
		}
		entries = append(entries, entry{name: kv.key, line: kv.keyN.Line, props: props})
	}
	out := make([]Resource, 0, len(entries))
	for _, e := range entries {
		r, err := p.build(typ, e.name, e.line, defaults, e.props)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// directForm reads `- type: {name: ..., props}`.
func (p *parser) directForm(typ string, n *yaml.Node, line int, subject string) (Resource, error) {
	props, err := p.d.pairs(n)
	if err != nil {
		return Resource{}, atKey(p.file, err, subject+"."+typ, line)
	}
	var name string
	found := false
	for _, kv := range props {
		if kv.key == "name" {
			if name, err = p.text(kv.value); err != nil {
				return Resource{}, atKey(p.file, err, subject+"."+typ+".name", kv.keyN.Line)
			}
			found = true
		}
	}
	if !found || name == "" {
		return Resource{}, &Error{File: p.file, Line: line, Subject: subject + "." + typ, Err: fmt.Errorf("%w: a properties map needs a non-empty name, or use the list form - %s: [- NAME: {...}]", ErrInvalid, typ)}
	}
	return p.build(typ, name, line, nil, props)
}

// propPairs reads a list-form entry's properties: a map, or null/{} for none.
func (p *parser) propPairs(n *yaml.Node) ([]pair, error) {
	n, err := p.d.resolve(n)
	if err != nil {
		return nil, err
	}
	switch {
	case n.Kind == yaml.MappingNode:
		return p.d.pairs(n)
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null":
		return nil, nil
	}
	v, _ := p.d.value(n)
	return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: properties must be a map (or {} for none), not %s", ErrInvalid, kindName(v))}
}

// build merges defaults and props (props win; control merged per key) and
// splits common properties out of the type-specific ones.
func (p *parser) build(typ, name string, line int, defaults, props []pair) (Resource, error) {
	r := Resource{Type: typ, Name: name, Line: line, Properties: make(map[string]any, len(defaults)+len(props))}
	subject := typ + "#" + name
	fail := func(err error, kv pair) (Resource, error) {
		return Resource{}, atResource(p.file, under(err, kv.key), subject, kv.keyN.Line)
	}

	var controls []pair
	merged := make([]pair, 0, len(defaults)+len(props))
	at := make(map[string]int, len(defaults)+len(props))
	add := func(kv pair) {
		if kv.key == "control" {
			controls = append(controls, kv)
			return
		}
		if i, ok := at[kv.key]; ok {
			merged[i] = kv
			return
		}
		at[kv.key] = len(merged)
		merged = append(merged, kv)
	}
	for _, kv := range defaults {
		if kv.key == "name" {
			return fail(&valueError{line: kv.keyN.Line, err: fmt.Errorf("%w: defaults cannot set name", ErrInvalid)}, kv)
		}
		add(kv)
	}
	for _, kv := range props {
		add(kv)
	}

	var err error
	for _, kv := range merged {
		switch kv.key {
		case "name":
			// The list-form key, or the direct-form value already read, wins.
		case "alias":
			r.Alias, err = p.text(kv.value)
		case "provider":
			r.Provider, err = p.str(kv.value)
		case "require":
			r.Require, err = p.refs(kv.value)
		case "subscribe":
			r.Subscribe, err = p.refs(kv.value)
			r.HasSubscribe = true
		case "health_checks":
			r.HealthChecks, err = p.healthChecks(kv.value)
		case "register_when_stable":
			r.RegisterWhenStable, err = p.registrations(kv.value)
		default:
			r.Properties[kv.key], err = p.d.value(kv.value)
		}
		if err != nil {
			return fail(err, kv)
		}
	}
	for _, kv := range controls {
		if err := p.control(kv.value, &r.Control); err != nil {
			return fail(err, kv)
		}
	}
	return r, nil
}

// refs reads a list of type#name strings; null is an empty list.
func (p *parser) refs(n *yaml.Node) ([]string, error) {
	v, err := p.d.value(n)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: must be a list such as [package#httpd], not %s", ErrInvalid, kindName(v))}
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, &valueError{line: n.Line, path: index(i), err: fmt.Errorf("%w: must be a type#name string, not %s", ErrInvalid, kindName(e))}
		}
		if _, err := ParseRef(s); err != nil {
			return nil, &valueError{line: n.Line, path: index(i), err: err}
		}
		out[i] = s
	}
	return out, nil
}

// control applies a control map over c, key by key, so that a resource's
// unless joins a defaults if (CCM's rule).
func (p *parser) control(n *yaml.Node, c *Control) error {
	n, err := p.d.resolve(n)
	if err != nil {
		return err
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &valueError{line: n.Line, err: fmt.Errorf("%w: must be a map with if and/or unless", ErrInvalid)}
	}
	pairs, err := p.d.pairs(n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		var s string
		switch kv.key {
		case "if", "unless":
			if s, err = p.text(kv.value); err != nil {
				return under(err, kv.key)
			}
		default:
			return &valueError{line: kv.keyN.Line, path: kv.key, err: unknownKey(kv.key, controlKeys)}
		}
		if kv.key == "if" {
			c.If = s
		} else {
			c.Unless = s
		}
	}
	return nil
}

// checkDuplicates rejects a type#name declared twice, and an alias that
// makes a require/subscribe lookup ambiguous.
func checkDuplicates(file string, rs []Resource) error {
	type seen struct {
		line  int
		alias bool
	}
	ids := make(map[string]seen, len(rs))
	for _, r := range rs {
		id := r.Type + "#" + r.Name
		if s, dup := ids[id]; dup {
			what := "declared twice"
			if s.alias {
				what = "name is already an alias"
			}
			return &Error{File: file, Line: r.Line, Subject: id, Err: fmt.Errorf("%w: %s; first at line %d; give each resource a unique name", ErrDuplicate, what, s.line)}
		}
		ids[id] = seen{line: r.Line}
		if r.Alias == "" || r.Alias == r.Name {
			continue
		}
		aid := r.Type + "#" + r.Alias
		if s, dup := ids[aid]; dup {
			return &Error{File: file, Line: r.Line, Subject: id, Err: fmt.Errorf("%w: alias %q is already used by the resource at line %d; require and subscribe could not tell them apart", ErrDuplicate, r.Alias, s.line)}
		}
		ids[aid] = seen{line: r.Line, alias: true}
	}
	return nil
}
