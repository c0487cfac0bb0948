package manifest

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// PluginRef is one entry of ccm.plugins: a third-party plugin module this
// manifest declares for itself and its child manifests.
//
//	ccm:
//	  plugins:
//	    - plugins/motd.wasm                 # path only
//	    - path: /opt/vendor/nginx_site.wasm # path and sha256 pin
//	      sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
type PluginRef struct {
	// Path as written: relative to the manifest's directory, or absolute.
	// It is not a template.
	Path string
	// SHA256 is the pinned digest in lowercase hex, or "" when not pinned.
	SHA256 string
	Line   int // line of the entry in the manifest
}

var pluginKeys = []string{"path", "sha256"}

// plugins decodes ccm.plugins: a list of paths or {path, sha256} maps.
func (p *parser) plugins(n *yaml.Node) ([]PluginRef, error) {
	return decodeList(p, n, "plugin files: - path/to/type.wasm, or - {path: ..., sha256: ...}", p.pluginRef)
}

// decodeList decodes a YAML list (null = empty) item by item; an item's
// error is placed under its index. what completes "must be a list of".
func decodeList[T any](p *parser, n *yaml.Node, what string, item func(*yaml.Node) (T, error)) ([]T, error) {
	n, err := p.d.resolve(n)
	if err != nil {
		return nil, err
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, &valueError{line: n.Line, err: fmt.Errorf("%w: must be a list of %s", ErrInvalid, what)}
	}
	out := make([]T, 0, len(n.Content))
	for i, c := range n.Content {
		v, err := item(c)
		if err != nil {
			return nil, under(err, index(i))
		}
		out = append(out, v)
	}
	return out, nil
}

func (p *parser) pluginRef(n *yaml.Node) (PluginRef, error) {
	n, err := p.d.resolve(n)
	if err != nil {
		return PluginRef{}, err
	}
	ref := PluginRef{Line: n.Line}
	switch n.Kind {
	case yaml.ScalarNode:
		if ref.Path, err = p.str(n); err != nil {
			return ref, err
		}
	case yaml.MappingNode:
		pairs, err := p.d.pairs(n)
		if err != nil {
			return ref, err
		}
		for _, kv := range pairs {
			switch kv.key {
			case "path":
				ref.Path, err = p.str(kv.value)
			case "sha256":
				// The text as written: an all-digit digest reads as a number.
				ref.SHA256, err = p.text(kv.value)
				if err == nil {
					ref.SHA256, err = pin(ref.SHA256, kv.value.Line)
				}
			default:
				err = &valueError{line: kv.keyN.Line, err: unknownKey(kv.key, pluginKeys)}
			}
			if err != nil {
				return ref, under(err, kv.key)
			}
		}
	default:
		v, _ := p.d.value(n)
		return ref, &valueError{line: n.Line, err: fmt.Errorf("%w: a plugin is a path or a map with path and sha256, not %s", ErrInvalid, kindName(v))}
	}
	if ref.Path == "" {
		return ref, &valueError{line: n.Line, path: "path", err: fmt.Errorf("%w: name the plugin's .wasm file (relative to this manifest's directory, or absolute)", ErrInvalid)}
	}
	if strings.ContainsRune(ref.Path, 0) {
		return ref, &valueError{line: n.Line, path: "path", err: fmt.Errorf("%w: the path holds a NUL byte", ErrInvalid)}
	}
	return ref, nil
}

// pin checks a sha256 pin: 64 hex digits (either case), returned lowercase.
func pin(s string, line int) (string, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "sha256:")
	if len(s) != 64 || strings.Trim(strings.ToLower(s), "0123456789abcdef") != "" {
		return "", &valueError{line: line, err: fmt.Errorf("%w: a sha256 pin is 64 hex digits, as printed by sha256sum FILE", ErrInvalid)}
	}
	return strings.ToLower(s), nil
}
