// Package shellwords splits a command line into words with POSIX shell
// quoting rules (single quotes, double quotes, backslash escapes) and no
// expansion of any kind. It is shared by the host (health checks) and the
// guest SDK (the exec plugin's posix provider), so it imports only the
// standard library and builds for GOOS=wasip1.
package shellwords

import (
	"errors"
	"strings"
)

// ErrUnterminated is returned for an unclosed quote or a trailing backslash.
var ErrUnterminated = errors.New("unterminated quote or escape")

// Split returns the words of s. Blanks (space, tab, newline) separate words;
// quotes group; `\` escapes the next character outside single quotes (inside
// double quotes only before $ ` " \ and newline, as in sh). An empty quoted
// string is a word.
func Split(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, ErrUnterminated
			}
			i++
			if s[i] != '\n' { // backslash-newline is a line continuation
				cur.WriteByte(s[i])
			}
			inWord = true
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, ErrUnterminated
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, ErrUnterminated
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
