package manifest

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Directive names that ParseDirectives normalises to; any other @word is
// kept as written so that the checker can warn about it.
const (
	DirectiveRequire  = "require"
	DirectiveValidate = "validate"
)

// Annotation is one directive read from a YAML comment directly above a
// key in `data:` (docs/manifests.md):
//
//	data:
//	  db:
//	    # @require
//	    # @validate isHostname(value) || isIP(value)
//	    host: ""
//
// gives Path ["db", "host"] twice, Directive "require" then "validate".
type Annotation struct {
	Path      []string // keys from the top of data down to the annotated key
	Line      int      // 1-based line of the directive's comment
	Directive string   // DirectiveRequire, DirectiveValidate, or an unknown word as written
	Arg       string   // the rest of the comment line, trimmed; the expression for validate
}

// ParseAnnotations reads the annotations of the `data` section of one
// YAML or JSON document (a manifest or a Hiera source). file is used in
// error messages. JSON has no comments, so it yields none; a document
// without `data` yields none.
//
// Only the shape needed to find `data` is checked here; Parse and
// DecodeValue report every other problem.
func ParseAnnotations(src []byte, file string) ([]Annotation, error) {
	root, err := parseYAML(src, file)
	if err != nil {
		return nil, err
	}
	return rootAnnotations(root), nil
}

// rootAnnotations finds `data` in the document's top mapping as written
// (an alias `data: *x` names a node written elsewhere, whose comments are
// not data annotations) and collects its annotations.
func rootAnnotations(root *yaml.Node) []Annotation {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "data" {
			return dataAnnotations(root.Content[i+1])
		}
	}
	return nil
}

// dataAnnotations walks the mapping under `data:` and collects the
// directives in the head comments of its keys, nested maps included.
//
// Aliases and merge keys (<<) are not followed: an annotation belongs to
// the key it is written above, and following an alias could pick up
// comments written under `overrides:`. Keys inside lists are not
// annotated (a list element has no stable path once `merge: deep`
// concatenates lists).
func dataAnnotations(n *yaml.Node) []Annotation {
	var out []Annotation
	var walk func(n *yaml.Node, path []string, depth int)
	walk = func(n *yaml.Node, path []string, depth int) {
		// The depth bound only guards the stack against hostile input;
		// real data is a few levels deep.
		if n == nil || n.Kind != yaml.MappingNode || depth > 100 {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				continue
			}
			p := append(path[:len(path):len(path)], k.Value)
			for _, d := range ParseDirectives(k.HeadComment, k.Line) {
				d.Path = p
				out = append(out, d)
			}
			walk(v, p, depth+1)
		}
	}
	walk(n, nil, 0)
	return out
}

// ParseDirectives reads the directives of one head comment as yaml.v3
// stores it: one source line per comment line, blank lines kept as empty
// ones, the last line directly above keyLine. A directive is a comment line
// whose text, after the '#' marks and spaces, starts with '@' and a word:
// "# @validate isIP(value)". Other comment lines are prose and ignored.
// @required is an alias of @require. Path is left empty.
func ParseDirectives(comment string, keyLine int) []Annotation {
	if !strings.Contains(comment, "@") {
		return nil
	}
	lines := strings.Split(comment, "\n")
	var out []Annotation
	for i, l := range lines {
		text := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		word, arg, ok := directive(text)
		if !ok {
			continue
		}
		if word == "required" {
			word = DirectiveRequire
		}
		line := keyLine - (len(lines) - i)
		if line < 1 {
			line = keyLine
		}
		out = append(out, Annotation{Line: line, Directive: word, Arg: arg})
	}
	return out
}

// directive splits "@word rest" into word and the trimmed rest. A word is
// letters, digits, '_' and '-' and must start with a letter, so "@ x",
// "@1" and "email@example.com" are prose.
func directive(text string) (word, arg string, ok bool) {
	if len(text) < 2 || text[0] != '@' || !isLetter(text[1]) {
		return "", "", false
	}
	end := 2
	for end < len(text) && (isLetter(text[end]) || text[end] == '_' || text[end] == '-' || (text[end] >= '0' && text[end] <= '9')) {
		end++
	}
	rest := text[end:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		// "@require(x)" or "@foo.bar": not a directive word boundary.
		return "", "", false
	}
	return text[1:end], strings.TrimSpace(rest), true
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
