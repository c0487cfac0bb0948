package manifest

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// fastYAML builds the node tree yaml.v3 would build for src when src is in
// a plain subset of block YAML, the shape of a generated manifest of many
// resources: block mappings and sequences, one `key: value` or `- entry` a
// line, plain scalars of a few safe characters, double-quoted scalars on
// one line with the escapes \n, \t, \" and \\. It reports false for
// anything else (comments, flow collections, anchors, tags, block scalars,
// multi-line scalars, empty values, other characters, tabs, CR, several
// documents, any doubt), and the caller parses src with yaml.v3 as before:
// the subset is a fast path, never a dialect. yaml.v3 spends most of a large
// manifest's parse in its scanner and event machinery; this builds the same
// nodes directly (TestFastYAMLMatches and FuzzFastYAML compare every field
// of every node with yaml.v3's).
func fastYAML(src []byte) (*yaml.Node, bool) {
	if len(src) == 0 || len(src) > 64<<20 {
		return nil, false
	}
	lines := make([]fastLine, 0, bytes.Count(src, []byte{'\n'})+1)
	for i, no := 0, 1; i < len(src); no++ {
		end := bytes.IndexByte(src[i:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += i
		}
		text := src[i:end]
		i = end + 1
		ind := 0
		for ind < len(text) && text[ind] == ' ' {
			ind++
		}
		if ind == len(text) {
			continue // blank
		}
		if ind == 0 && (bytes.HasPrefix(text, []byte("---")) || bytes.HasPrefix(text, []byte("..."))) {
			return nil, false // document markers
		}
		lines = append(lines, fastLine{text: text, no: no, col: ind})
	}
	if len(lines) == 0 || lines[0].col != 0 {
		return nil, false
	}
	p := &fastParser{lines: lines}
	n := p.node(0)
	if p.failed || n == nil || p.i != len(p.lines) {
		return nil, false
	}
	return n, true
}

// fastLine is one non-blank line; col is where the parser is in text (the
// indentation, then after a "- " the entry's content).
type fastLine struct {
	text []byte
	no   int
	col  int
}

type fastParser struct {
	lines  []fastLine
	i      int // current line
	failed bool
	depth  int                    // collections open; past maxFastDepth yaml.v3 decides (its own limit)
	slab   []yaml.Node            // nodes are taken from here, a few hundred at a time
	plain  map[string]plainScalar // short plain scalars seen: a manifest repeats its keys and values
}

// plainScalar is a plain scalar's text and the tag yaml.v3 resolves it to.
type plainScalar struct{ value, tag string }

// newNode returns a node from the parser's slab.
func (p *fastParser) newNode(n yaml.Node) *yaml.Node {
	if len(p.slab) == 0 {
		p.slab = make([]yaml.Node, 256)
	}
	v := &p.slab[0]
	p.slab = p.slab[1:]
	*v = n
	return v
}

// scalar returns the node of a scalar scanned by scanScalar.
func (p *fastParser) scalar(s scanned, no int) *yaml.Node {
	c, quoted, value := s.col, s.quoted, s.value
	n := p.newNode(yaml.Node{Kind: yaml.ScalarNode, Line: no, Column: c + 1})
	if quoted {
		n.Style, n.Tag, n.Value = yaml.DoubleQuotedStyle, "!!str", string(value)
		return n
	}
	if len(value) > 32 {
		n.Value = string(value)
		n.Tag = n.ShortTag() // what yaml.v3 resolves a plain scalar to
		return n
	}
	if ps, ok := p.plain[string(value)]; ok {
		n.Value, n.Tag = ps.value, ps.tag
		return n
	}
	n.Value = string(value)
	n.Tag = n.ShortTag()
	if p.plain == nil {
		p.plain = map[string]plainScalar{}
	}
	if len(p.plain) < 4096 {
		p.plain[n.Value] = plainScalar{n.Value, n.Tag}
	}
	return n
}

func (p *fastParser) fail() *yaml.Node {
	p.failed = true
	return nil
}

// node parses the block node starting at the current line's col, which is
// ind: a sequence (a "- " entry) or a mapping (a "key:" entry). A lone
// scalar line is not in the subset.
func (p *fastParser) node(ind int) *yaml.Node {
	if p.i >= len(p.lines) {
		return p.fail()
	}
	l := &p.lines[p.i]
	if l.col != ind {
		return p.fail()
	}
	if isEntry(l.text[l.col:]) {
		return p.sequence(ind)
	}
	return p.mapping(ind)
}

// isEntry tells whether s starts a sequence entry: "- " or a lone "-".
func isEntry(s []byte) bool {
	return len(s) > 0 && s[0] == '-' && (len(s) == 1 || s[1] == ' ')
}

// maxFastDepth bounds the nesting fastYAML reads, far under yaml.v3's
// limit of 10 000 levels of indentation, which a document past it meets.
const maxFastDepth = 1000

// enter counts one more collection open; false past maxFastDepth.
func (p *fastParser) enter() bool {
	p.depth++
	return p.depth <= maxFastDepth
}

func (p *fastParser) sequence(ind int) *yaml.Node {
	if !p.enter() {
		return p.fail()
	}
	defer func() { p.depth-- }()
	l := p.lines[p.i]
	n := p.newNode(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: l.no, Column: ind + 1})
	for !p.failed && p.i < len(p.lines) {
		l := &p.lines[p.i]
		if l.col < ind || (l.col == ind && !isEntry(l.text[l.col:])) {
			break // the parent's next entry, if it has one
		}
		if l.col != ind {
			return p.fail()
		}
		c := ind + 1
		for c < len(l.text) && l.text[c] == ' ' {
			c++
		}
		if c == len(l.text) || isEntry(l.text[c:]) {
			return p.fail() // "-" alone, or "- - x"
		}
		l.col = c
		var v *yaml.Node
		if _, _, isKey := scanKey(l.text, c); isKey {
			v = p.mapping(c)
		} else {
			v = p.scalarLine(ind, c)
		}
		if v == nil {
			return p.fail()
		}
		n.Content = append(n.Content, v)
	}
	if p.failed {
		return nil
	}
	return n
}

// scalarLine is a sequence entry that is a scalar, the rest of its line;
// ind is the sequence's indentation.
func (p *fastParser) scalarLine(ind, c int) *yaml.Node {
	l := p.lines[p.i]
	sv, end, ok := scanScalar(l.text, c, false)
	if !ok || !onlySpaces(l.text[end:]) {
		return p.fail()
	}
	v := p.scalar(sv, l.no)
	p.i++
	if p.i < len(p.lines) && p.lines[p.i].col > ind {
		// A deeper line after a scalar entry continues it (a multi-line
		// scalar) or is an error: yaml.v3 decides.
		return p.fail()
	}
	return v
}

func (p *fastParser) mapping(ind int) *yaml.Node {
	if !p.enter() {
		return p.fail()
	}
	defer func() { p.depth-- }()
	l := p.lines[p.i]
	n := p.newNode(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: l.no, Column: ind + 1})
	for !p.failed && p.i < len(p.lines) {
		l := &p.lines[p.i]
		if l.col < ind {
			break
		}
		if l.col != ind || isEntry(l.text[l.col:]) {
			return p.fail()
		}
		sk, after, ok := scanKey(l.text, ind)
		if !ok {
			return p.fail()
		}
		key := p.scalar(sk, l.no)
		// after is just past the ':'; the value follows on the line or
		// on the next lines.
		c := after
		for c < len(l.text) && l.text[c] == ' ' {
			c++
		}
		var v *yaml.Node
		if c < len(l.text) {
			sv, end, ok := scanScalar(l.text, c, false)
			if !ok || !onlySpaces(l.text[end:]) {
				return p.fail()
			}
			v = p.scalar(sv, l.no)
			p.i++
			if p.i < len(p.lines) && p.lines[p.i].col > ind {
				return p.fail() // a continuation or an error: yaml.v3 decides
			}
		} else {
			p.i++
			if p.i >= len(p.lines) {
				return p.fail() // an empty value
			}
			next := p.lines[p.i]
			switch {
			case next.col > ind:
				v = p.node(next.col)
			case next.col == ind && isEntry(next.text[next.col:]):
				v = p.sequence(ind)
			default:
				return p.fail() // an empty value
			}
			if v == nil {
				return p.fail()
			}
		}
		n.Content = append(n.Content, key, v)
	}
	if p.failed {
		return nil
	}
	return n
}

func onlySpaces(s []byte) bool {
	for _, c := range s {
		if c != ' ' {
			return false
		}
	}
	return true
}

// scanned is a scalar found by scanScalar: its text (escapes decoded),
// whether it was double-quoted, and its column (0-based).
type scanned struct {
	value  []byte
	quoted bool
	col    int
}

// scanKey reads a mapping key at text[c:]: a scalar followed by ':' and
// then a space or the end of the line. It returns the key and the index
// just past the ':'.
func scanKey(text []byte, c int) (scanned, int, bool) {
	k, end, ok := scanScalar(text, c, true)
	if !ok || end >= len(text) || text[end] != ':' || end-c > 1000 {
		// (yaml.v3 refuses a key of more than 1024 characters)
		return scanned{}, 0, false
	}
	if end+1 < len(text) && text[end+1] != ' ' {
		return scanned{}, 0, false
	}
	return k, end + 1, true
}

// scanScalar reads a plain or double-quoted scalar at text[c:] and returns
// it and the index just past it (trailing spaces of a plain scalar
// excluded). A plain key ends before ": " or a final ':'; a plain value
// never contains ':'. Not ok when the text is not in the subset.
func scanScalar(text []byte, c int, key bool) (scanned, int, bool) {
	if c >= len(text) {
		return scanned{}, 0, false
	}
	if text[c] == '"' {
		return scanQuoted(text, c)
	}
	if !plainFirst(text, c) {
		return scanned{}, 0, false
	}
	end := c
	last := c // just past the last non-space
	for end < len(text) {
		ch := text[end]
		if ch == ' ' {
			end++
			continue
		}
		if ch == ':' {
			if !key {
				return scanned{}, 0, false
			}
			break
		}
		if !plainChar(ch) {
			return scanned{}, 0, false
		}
		end++
		last = end
	}
	return scanned{value: text[c:last], col: c}, last, true
}

// plainFirst: a plain scalar starts with a letter, a digit, or one of a
// few characters that are no indicator; '-' only before such a character.
func plainFirst(text []byte, c int) bool {
	ch := text[c]
	switch {
	case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		return true
	case ch == '/' || ch == '_' || ch == '.' || ch == '+' || ch == '~' || ch == '$' || ch == '(' || ch == '=':
		return true
	case ch == '-':
		return c+1 < len(text) && text[c+1] != '-' && plainChar(text[c+1])
	}
	return false
}

func plainChar(ch byte) bool { return plainChars[ch] }

// plainChars are the characters of a plain scalar in the subset.
var plainChars = func() (t [256]bool) {
	for c := range 256 {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			t[c] = true
		}
	}
	for _, c := range []byte("/_.+~$()=-,;^") {
		t[c] = true
	}
	return t
}()

// scanQuoted reads a double-quoted scalar that ends on its line; of the
// escapes only \n, \t, \" and \\ are in the subset.
func scanQuoted(text []byte, c int) (scanned, int, bool) {
	var sb []byte
	plain := true
	i := c + 1
	for ; i < len(text); i++ {
		ch := text[i]
		if ch == '"' {
			break
		}
		if ch < 0x20 || ch > 0x7e {
			return scanned{}, 0, false
		}
		if ch != '\\' {
			if !plain {
				sb = append(sb, ch)
			}
			continue
		}
		if plain {
			sb = append(sb, text[c+1:i]...)
			plain = false
		}
		i++
		if i >= len(text) {
			return scanned{}, 0, false
		}
		switch text[i] {
		case 'n':
			sb = append(sb, '\n')
		case 't':
			sb = append(sb, '\t')
		case '"', '\\':
			sb = append(sb, text[i])
		default:
			return scanned{}, 0, false
		}
	}
	if i >= len(text) {
		return scanned{}, 0, false // continues on the next line
	}
	if plain {
		sb = text[c+1 : i]
	}
	return scanned{value: sb, quoted: true, col: c}, i + 1, true
}
