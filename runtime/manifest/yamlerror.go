package manifest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	goccy "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
)

// locate finds where a YAML syntax error really is. go.yaml.in/yaml/v3
// (the decoder) reports the line where the enclosing construct started,
// often the line before the mistake, and no column; goccy/go-yaml's
// parser points at the offending token, so it is run on the failed
// source only to place the error. ok is false when it finds no error
// (the two parsers disagree), and the caller keeps yaml/v3's line.
func locate(src []byte) (line, col int, msg string, ok bool) {
	if len(src) > maxLocate {
		return 0, 0, "", false
	}
	_, err := parseForPosition(src)
	var ye goccy.Error
	if err == nil || !errors.As(err, &ye) || ye.GetToken() == nil {
		return 0, 0, "", false
	}
	pos := ye.GetToken().Position
	line, col, msg = pos.Line, pos.Column, ye.GetMessage()
	if strings.HasPrefix(msg, "mapping value is not allowed") {
		// The token is the start of the scalar; the mistake is the ": "
		// that follows it, possibly on a continuation line.
		line, col = nextColon(src, line, col)
	}
	return line, col, msg, line > 0
}

// maxLocate bounds the documents parsed a second time to place an error:
// manifests are kilobytes; a huge data file keeps yaml/v3's line.
const maxLocate = 4 << 20

// parseForPosition runs goccy's parser, which must not crash the run on
// input yaml/v3 already rejected.
func parseForPosition(src []byte) (_ any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = nil
		}
	}()
	return goccyparser.ParseBytes(src, 0)
}

// nextColon returns the position of the first ": " (or ":" at the end of
// a line) at or after line:col.
func nextColon(src []byte, line, col int) (int, int) {
	lines := strings.Split(string(src), "\n")
	for l := line; l >= 1 && l <= len(lines); l++ {
		text := lines[l-1]
		from := 0
		if l == line {
			from = min(max(col-1, 0), len(text))
		}
		for i := from; i < len(text); i++ {
			if text[i] == ':' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t') {
				return l, i + 1
			}
		}
	}
	return line, col
}

// excerpt shows the source line with a caret under col, and the line
// before it for context, numbered like an editor.
func excerpt(src []byte, line, col int) string {
	lines := strings.Split(strings.TrimRight(string(src), "\n"), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	width := len(strconv.Itoa(line))
	var b strings.Builder
	show := func(n int) {
		fmt.Fprintf(&b, "%*d | %s\n", width, n, strings.ReplaceAll(lines[n-1], "\t", "→"))
	}
	if line > 1 {
		show(line - 1)
	}
	show(line)
	if col > 0 {
		fmt.Fprintf(&b, "%s | %s^", strings.Repeat(" ", width), strings.Repeat(" ", col-1))
	}
	return strings.TrimRight(b.String(), "\n")
}

// yamlHint says how to fix the common mistakes behind a syntax message.
func yamlHint(msg, srcLine string) string {
	switch {
	case strings.Contains(msg, "cannot start any token") && strings.Contains(srcLine, "\t"):
		return "YAML does not allow tabs for indentation; indent with spaces"
	case strings.Contains(msg, "double-quoted") || strings.Contains(msg, "single-quoted"):
		return "the quote opened here is never closed; close it on this line or quote the whole value"
	case strings.Contains(msg, "flow map") && strings.Contains(srcLine, "{{"):
		return `a value starting with { is a YAML map; quote a template: name: "{{ Data.x }}/y"`
	case strings.Contains(msg, "']'") || strings.Contains(msg, "'}'"):
		return "a [ or { opened above is never closed; close it or quote the value"
	case strings.Contains(msg, "mapping value is not allowed"):
		return `a plain value cannot hold ": "; quote the value (key: "a: b") or fix the indentation`
	case strings.Contains(msg, "already defined"):
		return "remove or rename one of the two keys"
	case strings.Contains(msg, "non-map value") || strings.Contains(msg, "value is not allowed in this context") || strings.Contains(msg, "did not find expected"):
		return "check the indentation: keys of one map line up, list items start with \"- \" at the same column"
	}
	return ""
}
