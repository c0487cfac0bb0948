package trust

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseGrant decodes a grant document (YAML or JSON) strictly: unknown keys
// are refused, and every path and executable must be an absolute glob. An
// empty document grants nothing.
func ParseGrant(src []byte) (Grant, error) {
	var doc any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return Grant{}, fmt.Errorf("grant: %w", err)
	}
	if doc == nil {
		return Grant{}, nil
	}
	return DecodeGrant(doc)
}

// DecodeGrant turns a decoded map (a manifest's grants property) into a
// Grant, with the checks of ParseGrant.
func DecodeGrant(v any) (Grant, error) { return DecodeGrantIn(v, "") }

// DecodeGrantIn is DecodeGrant for a grant written in a manifest in dir (an
// absolute, clean directory): a relative fs_read, fs_write or exec glob is
// taken from dir, so "vendor/plugins/*.wasm" in /srv/site/main.yaml grants
// /srv/site/vendor/plugins/*.wasm. The glob characters of dir itself are
// escaped: only the glob as written matches more than one path. dir ""
// keeps relative globs an error.
func DecodeGrantIn(v any, dir string) (Grant, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return Grant{}, fmt.Errorf("grant: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var g Grant
	if err := dec.Decode(&g); err != nil {
		return Grant{}, fmt.Errorf("grant: %w (keys: fs_read, fs_write, exec, net, users, setid, env, probe_exec)", err)
	}
	for _, p := range g.ProbeExec {
		if !path.IsAbs(p) || strings.Contains(p, "  ") || strings.TrimSpace(p) != p {
			return Grant{}, fmt.Errorf("grant: probe_exec entry %q is not an absolute program and its leading arguments, joined by single spaces", p)
		}
	}
	for _, e := range g.Env {
		name, _, _ := strings.Cut(e, "=")
		if e != "*" && (name == "" || strings.ContainsAny(name, "\x00*")) {
			return Grant{}, fmt.Errorf("grant: env entry %q is not NAME, NAME=VALUE or \"*\"", e)
		}
	}
	for _, e := range g.Net {
		if err := checkNetEntry(e); err != nil {
			return Grant{}, fmt.Errorf("grant: %w", err)
		}
	}
	for kind, globs := range map[string][]string{"fs_read": g.FSRead, "fs_write": g.FSWrite, "exec": g.Exec} {
		for i, p := range globs {
			switch {
			case path.IsAbs(p):
			case dir != "" && p != "":
				// Escaping adds no "/", so Join's ".." handling is sound.
				globs[i] = path.Join(escapeGlob(dir), p)
			case dir != "":
				return Grant{}, fmt.Errorf("grant: %s has an empty entry", kind)
			default:
				return Grant{}, fmt.Errorf("grant: %s entry %q is not an absolute path glob", kind, p)
			}
			if !validGlob(p) {
				return Grant{}, fmt.Errorf("grant: %s entry %q is not valid UTF-8 (or holds U+FFFD): it could not be matched byte for byte", kind, p)
			}
		}
	}
	return g, nil
}

// escapeGlob quotes the doublestar glob characters of a literal path.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
