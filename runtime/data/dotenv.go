package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// LoadDotEnv reads a .env file with ordinary dotenv rules (docs/manifests.md):
// blank lines and "#" comments are skipped; a leading "export " is
// allowed; spaces around the key and "=" are trimmed; one pair of matching
// surrounding quotes is stripped ("…" understands \n, \r, \t, \" and \\;
// '…' is literal); an unquoted value ends at " #"; empty values are kept.
// A missing file gives an empty map and no error.
func LoadDotEnv(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return parseDotEnv(b, path)
}

func parseDotEnv(b []byte, path string) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export "); ok {
			line = strings.TrimSpace(rest)
		}
		key, raw, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: expected KEY=value, got %q", path, n, clipLine(line))
		}
		key = strings.TrimSpace(key)
		if !validEnvKey(key) {
			return nil, fmt.Errorf("%s:%d: %q is not a variable name; use letters, digits and _ (not starting with a digit)", path, n, clipLine(key))
		}
		val, err := dotEnvValue(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", path, n, key, err)
		}
		out[key] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

func dotEnvValue(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	switch q := raw[0]; q {
	case '"', '\'':
		var b strings.Builder
		for i := 1; i < len(raw); i++ {
			c := raw[i]
			switch {
			case c == q:
				if rest := strings.TrimSpace(raw[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
					return "", fmt.Errorf("unexpected %q after the closing quote", clipLine(rest))
				}
				return b.String(), nil
			case c == '\\' && q == '"' && i+1 < len(raw):
				i++
				switch e := raw[i]; e {
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				case '"', '\\':
					b.WriteByte(e)
				default:
					b.WriteByte('\\')
					b.WriteByte(e)
				}
			default:
				b.WriteByte(c)
			}
		}
		return "", fmt.Errorf("missing closing %c quote (values span one line)", q)
	}
	if i := strings.Index(raw, " #"); i >= 0 {
		raw = strings.TrimSpace(raw[:i])
	}
	return raw, nil
}

func validEnvKey(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c != '_' && c != '.' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func clipLine(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// Environ returns the process environment overlaid with the .env map.
func Environ(dotenv map[string]string) map[string]string {
	env := os.Environ()
	out := make(map[string]string, len(env)+len(dotenv))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			out[k] = v
		}
	}
	for k, v := range dotenv {
		out[k] = v
	}
	return out
}
