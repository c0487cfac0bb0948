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
func DecodeGrant(v any) (Grant, error) {
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
	for kind, globs := range map[string][]string{"fs_read": g.FSRead, "fs_write": g.FSWrite, "exec": g.Exec} {
		for _, p := range globs {
			if !path.IsAbs(p) {
				return Grant{}, fmt.Errorf("grant: %s entry %q is not an absolute path glob", kind, p)
			}
			if !validGlob(p) {
				return Grant{}, fmt.Errorf("grant: %s entry %q is not valid UTF-8 (or holds U+FFFD): it could not be matched byte for byte", kind, p)
			}
		}
	}
	return g, nil
}
