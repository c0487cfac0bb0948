package manifest

import (
	"bytes"
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Document is one decoded manifest.
type Document struct {
	File string

	Data      map[string]any // raw `data`; nil if absent
	Hierarchy map[string]any // raw `hierarchy`, shape checked: order list of strings, merge first|deep
	Overrides map[string]any // raw `overrides`: map of maps
	// Annotations are the @require/@validate directives in comments above
	// keys of `data` (docs/manifests.md), in document order; none for JSON.
	Annotations []Annotation

	FailOnError             bool
	PreMessage, PostMessage string
	// ResourcesJetFile is relative to the manifest directory; the engine
	// renders it and parses the output with ParseResources.
	ResourcesJetFile string
	Resources        []Resource // declaration order, `defaults` applied
	// Plugins are the third-party plugin modules of ccm.plugins, in order.
	Plugins []PluginRef
}

// Parse decodes one manifest document (YAML or JSON). file is used in
// error messages ("site.yaml:12: ..."). It applies `defaults` blocks,
// splits common properties out, and rejects unknown keys (top level, ccm,
// hierarchy, control and health check entries) with their path.
//
// Resource types are not checked against a registry, and templates are
// not expanded: names and properties are returned raw.
func Parse(src []byte, file string) (*Document, error) {
	root, err := parseYAML(src, file)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, d: newDecoder(len(src))}
	doc := &Document{File: file}
	if root == nil {
		return nil, &Error{File: file, Err: fmt.Errorf("%w: the manifest is empty; declare resources under ccm.resources", ErrNoResources)}
	}
	if err := p.top(root, doc); err != nil {
		// yaml.v3 places a node of an empty document ("---") on the line
		// after the last: point at the last line instead.
		var e *Error
		if errors.As(err, &e) {
			if n := lineCount(src); e.Line > n {
				e.Line, e.Column = n, 0
			}
		}
		return nil, err
	}
	return doc, nil
}

// lineCount counts lines as YAML does: "\r\n", "\r" and "\n" each end one
// (a lone "\r" is a line break to both YAML parsers).
func lineCount(src []byte) int {
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	return bytes.Count(src, []byte("\n")) + bytes.Count(src, []byte("\r")) + 1
}

// parser holds what every step of one Parse call needs.
type parser struct {
	file string
	d    *decoder
	list string // subject of the resource list in errors; "" is ccm.resources
}

// listName names the resource list being parsed in error messages.
func (p *parser) listName() string {
	if p.list == "" {
		return "ccm.resources"
	}
	return p.list
}

func (p *parser) top(root *yaml.Node, doc *Document) error {
	line := root.Line
	root, err := p.d.resolve(root)
	if err != nil {
		return atKey(p.file, err, "", line)
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return &Error{File: p.file, Line: root.Line, Err: fmt.Errorf("%w: the manifest is empty; declare resources under ccm.resources", ErrNoResources)}
	}
	if root.Kind != yaml.MappingNode {
		return &Error{File: p.file, Line: root.Line, Err: fmt.Errorf("%w: a manifest is a map with keys ccm, data, hierarchy, overrides", ErrInvalid)}
	}
	pairs, err := p.d.pairs(root)
	if err != nil {
		return atKey(p.file, err, "", root.Line)
	}
	var ccm *yaml.Node
	for _, kv := range pairs {
		switch kv.key {
		case "data":
			if doc.Data, err = p.mapValue(kv.value); err != nil {
				return atKey(p.file, err, "data", kv.keyN.Line)
			}
			doc.Annotations = rootAnnotations(root)
		case "hierarchy":
			if doc.Hierarchy, err = p.hierarchy(kv.value); err != nil {
				return atKey(p.file, err, "hierarchy", kv.keyN.Line)
			}
		case "overrides":
			if doc.Overrides, err = p.overrides(kv.value); err != nil {
				return atKey(p.file, err, "overrides", kv.keyN.Line)
			}
		case "ccm":
			ccm = kv.value
		default:
			return &Error{File: p.file, Line: kv.keyN.Line, Subject: kv.key, Err: unknownKey(kv.key, topKeys)}
		}
	}
	if ccm == nil || (ccm.Kind == yaml.ScalarNode && ccm.ShortTag() == "!!null") {
		return &Error{File: p.file, Line: root.Line, Err: fmt.Errorf("%w: the manifest has no ccm section; declare resources under ccm.resources", ErrNoResources)}
	}
	return p.ccm(ccm, doc)
}

// mapValue decodes n, which must be a map or null.
func (p *parser) mapValue(n *yaml.Node) (map[string]any, error) {
	v, err := p.d.value(n)
	if err != nil {
		return nil, err
	}
	switch m := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return m, nil
	}
	return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: must be a map, not %s", ErrInvalid, kindName(v))}
}

func (p *parser) hierarchy(n *yaml.Node) (map[string]any, error) {
	m, err := p.mapValue(n)
	if err != nil || m == nil {
		return m, err
	}
	n, _ = p.d.resolve(n)
	pairs, err := p.d.pairs(n)
	if err != nil {
		return nil, err
	}
	line := map[string]int{}
	for _, kv := range pairs {
		line[kv.key] = kv.keyN.Line
		if !allowedKey(kv.key, hierarchyKeys) {
			return nil, &valueError{line: kv.keyN.Line, path: kv.key, err: unknownKey(kv.key, hierarchyKeys)}
		}
	}
	order, ok := m["order"].([]any)
	if !ok {
		return nil, &valueError{line: n.Line, path: "order", err: fmt.Errorf("%w: hierarchy needs an order list such as [\"os:${ lookup('facts.host.info.platformFamily') }\", default]", ErrInvalid)}
	}
	for i, e := range order {
		if _, ok := e.(string); !ok {
			return nil, &valueError{line: line["order"], path: "order" + index(i), err: fmt.Errorf("%w: must be a string, not %s", ErrInvalid, kindName(e))}
		}
	}
	if merge, present := m["merge"]; present {
		if s, _ := merge.(string); s != "first" && s != "deep" {
			return nil, &valueError{line: line["merge"], path: "merge", err: fmt.Errorf("%w: %v; use first or deep", ErrInvalid, merge)}
		}
	}
	return m, nil
}

func (p *parser) overrides(n *yaml.Node) (map[string]any, error) {
	m, err := p.mapValue(n)
	if err != nil || m == nil {
		return m, err
	}
	for k, v := range m {
		switch v.(type) {
		case nil, map[string]any:
		default:
			return nil, &valueError{line: n.Line, path: k, err: fmt.Errorf("%w: an override must be a map of data keys, not %s", ErrInvalid, kindName(v))}
		}
	}
	return m, nil
}

func (p *parser) ccm(n *yaml.Node, doc *Document) error {
	n, err := p.d.resolve(n)
	if err != nil {
		return atKey(p.file, err, "ccm", 0)
	}
	if n.Kind != yaml.MappingNode {
		return &Error{File: p.file, Line: n.Line, Subject: "ccm", Err: fmt.Errorf("%w: must be a map with keys %v", ErrInvalid, ccmKeys)}
	}
	pairs, err := p.d.pairs(n)
	if err != nil {
		return atKey(p.file, err, "ccm", n.Line)
	}
	var resources *yaml.Node
	resourcesLine := n.Line
	for _, kv := range pairs {
		path := "ccm." + kv.key
		switch kv.key {
		case "resources":
			resources, resourcesLine = kv.value, kv.keyN.Line
		case "resources_jet_file":
			if doc.ResourcesJetFile, err = p.str(kv.value); err == nil && doc.ResourcesJetFile == "" {
				err = &valueError{line: kv.value.Line, err: fmt.Errorf("%w: must name a file", ErrInvalid)}
			}
		case "fail_on_error":
			doc.FailOnError, err = p.boolean(kv.value)
		case "pre_message":
			doc.PreMessage, err = p.str(kv.value)
		case "post_message":
			doc.PostMessage, err = p.str(kv.value)
		case "plugins":
			doc.Plugins, err = p.plugins(kv.value)
		default:
			err = &valueError{line: kv.keyN.Line, err: unknownKey(kv.key, ccmKeys)}
		}
		if err != nil {
			return atKey(p.file, err, path, kv.keyN.Line)
		}
	}
	hasList := resources != nil && !(resources.Kind == yaml.ScalarNode && resources.ShortTag() == "!!null")
	switch {
	case hasList && doc.ResourcesJetFile != "":
		return &Error{File: p.file, Line: resourcesLine, Subject: "ccm", Err: fmt.Errorf("%w: resources and resources_jet_file are exclusive; keep one", ErrInvalid)}
	case doc.ResourcesJetFile != "":
		return nil
	case !hasList:
		return &Error{File: p.file, Line: resourcesLine, Subject: "ccm.resources", Err: fmt.Errorf("%w: declare at least one resource", ErrNoResources)}
	}
	if doc.Resources, err = p.resources(resources); err != nil {
		return err
	}
	if len(doc.Resources) == 0 {
		return &Error{File: p.file, Line: resourcesLine, Subject: "ccm.resources", Err: fmt.Errorf("%w: declare at least one resource", ErrNoResources)}
	}
	return checkDuplicates(p.file, doc.Resources)
}

// str reads a string scalar; null reads as "".
func (p *parser) str(n *yaml.Node) (string, error) {
	v, err := p.d.value(n)
	if err != nil {
		return "", err
	}
	switch s := v.(type) {
	case nil:
		return "", nil
	case string:
		return s, nil
	}
	return "", &valueError{line: n.Line, err: fmt.Errorf("%w: must be a string, not %s", ErrInvalid, kindName(v))}
}

// text reads a scalar as the text the author wrote, so that `if: true` or
// a numeric name is accepted; null reads as "" and lists and maps fail.
func (p *parser) text(n *yaml.Node) (string, error) {
	r, err := p.d.resolve(n)
	if err != nil {
		return "", err
	}
	if r.Kind != yaml.ScalarNode {
		v, _ := p.d.value(r)
		return "", &valueError{line: r.Line, err: fmt.Errorf("%w: must be a string, not %s", ErrInvalid, kindName(v))}
	}
	if r.ShortTag() == "!!null" {
		return "", nil
	}
	v, err := scalar(r)
	if err != nil {
		return "", err
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return r.Value, nil
}

func (p *parser) boolean(n *yaml.Node) (bool, error) {
	v, err := p.d.value(n)
	if err != nil {
		return false, err
	}
	switch b := v.(type) {
	case nil:
		return false, nil
	case bool:
		return b, nil
	}
	return false, &valueError{line: n.Line, err: fmt.Errorf("%w: must be true or false, not %s", ErrInvalid, kindName(v))}
}

// kindName names a decoded value's kind for error messages.
func kindName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:37] + "..."
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case int, float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}
