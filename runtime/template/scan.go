package template

import (
	"fmt"
	"strings"
)

// HasTemplate reports whether s contains "{{" or "${", i.e. whether
// expanding it can change it.
func HasTemplate(s string) bool {
	for i := strings.IndexByte(s, '{'); i >= 0; {
		if (i+1 < len(s) && s[i+1] == '{') || (i > 0 && s[i-1] == '$') {
			return true
		}
		next := strings.IndexByte(s[i+1:], '{')
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// segment is literal text or one expression of a template string.
type segment struct {
	text   string // literal text, or the trimmed expression source
	isExpr bool
}

// scan splits s into literal and expression segments.
//
//   - "{{ e }}" and "${ e }" hold the expression e;
//   - "${{ e }}" is a literal "$" followed by "{{ e }}";
//   - quotes (', ", `) inside an expression are skipped when looking for
//     the closing delimiter, and braces nest, so `${ {"a": 1}.a }` works.
func scan(s string) ([]segment, error) {
	var out []segment
	lit := 0 // start of the pending literal
	i := 0
	for i < len(s) {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		open := i + j
		var start int // first byte of the expression
		double := false
		switch {
		case open+1 < len(s) && s[open+1] == '{':
			start, double = open+2, true
		case open > 0 && s[open-1] == '$':
			open-- // the delimiter starts at '$'
			start = open + 2
		default:
			i = open + 1
			continue
		}
		end, next, err := closing(s, start, double)
		if err != nil {
			return nil, err
		}
		if open > lit {
			out = append(out, segment{text: s[lit:open]})
		}
		src := strings.TrimSpace(s[start:end])
		if src == "" {
			return nil, fmt.Errorf("empty expression at offset %d of %q; put an expression between the delimiters", open, clip(s))
		}
		out = append(out, segment{text: src, isExpr: true})
		lit, i = next, next
	}
	if lit < len(s) {
		out = append(out, segment{text: s[lit:]})
	}
	return out, nil
}

// closing finds the end of the expression starting at start: the index
// of its closing delimiter and the index just past it.
func closing(s string, start int, double bool) (end, next int, err error) {
	depth := 0
	for i := start; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"', '`':
			q, ok := skipQuoted(s, i)
			if !ok {
				return 0, 0, fmt.Errorf("unterminated %c quote in expression %q", c, clip(s[start:]))
			}
			i = q
		case '{':
			depth++
		case '}':
			switch {
			case depth > 0:
				depth--
			case !double:
				return i, i + 1, nil
			case i+1 < len(s) && s[i+1] == '}':
				return i, i + 2, nil
			}
		}
	}
	delim := "}"
	if double {
		delim = "}}"
	}
	return 0, 0, fmt.Errorf("unterminated expression %q; close it with %q", clip(s[start:]), delim)
}

// skipQuoted returns the index of the quote closing the string literal
// opened at i. Backslash escapes apply inside ' and ", not inside `.
func skipQuoted(s string, i int) (int, bool) {
	q := s[i]
	for k := i + 1; k < len(s); k++ {
		switch s[k] {
		case '\\':
			if q != '`' {
				k++
			}
		case q:
			return k, true
		}
	}
	return 0, false
}

// clip shortens s for error messages.
func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// single returns the expression when segs is exactly one expression with
// only whitespace around it.
func single(segs []segment) (string, bool) {
	src, found := "", false
	for _, sg := range segs {
		switch {
		case sg.isExpr && found:
			return "", false
		case sg.isExpr:
			src, found = sg.text, true
		case strings.TrimSpace(sg.text) != "":
			return "", false
		}
	}
	return src, found
}
