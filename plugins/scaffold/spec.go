package main

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/ccm-dev/ccm/plugins/internal/props"
	"github.com/ccm-dev/ccm/sdk/shellwords"
)

// spec is one scaffold resource's properties, checked and with CCM's
// defaults applied.
type spec struct {
	target    string
	ensure    string
	source    string // as written; resolved against the working directory at apply
	engine    string
	left      string
	right     string
	skipEmpty bool
	purge     bool
	data      map[string]any // nil: the manifest's data
	post      []postRule
}

// postRule is one glob → command entry of post.
type postRule struct {
	glob string
	argv []string
}

func parseSpec(name string, p map[string]any, provider string) (spec, []string) {
	r := props.New(p)
	r.Known("name")
	s := spec{target: name, ensure: ensurePresent, engine: engineJet}
	if provider != "" && provider != providerChoria {
		r.Errorf("provider: %q is not a scaffold provider; the only one is %q", provider, providerChoria)
	}
	switch {
	case name == "":
		r.Errorf("name: the target directory is required")
	case !path.IsAbs(name):
		r.Errorf("name: %q must be an absolute path", name)
	case path.Clean(name) != name:
		r.Errorf("name: %q must be a canonical path (%q)", name, path.Clean(name))
	case name == "/":
		r.Errorf("name: the target directory cannot be /")
	}
	if e, ok := r.String("ensure"); ok {
		if e != ensurePresent && e != ensureAbsent {
			r.Errorf("ensure: must be one of %q or %q, got %q", ensurePresent, ensureAbsent, e)
		}
		s.ensure = e
	}
	if src, ok := r.String("source"); ok && src != "" {
		s.source = src
	} else {
		r.Errorf("source: the template directory is required")
	}
	if e, ok := r.String("engine"); ok && e != "" {
		if e != engineGo && e != engineJet {
			r.Errorf("engine: must be one of %q or %q, got %q", engineGo, engineJet, e)
		}
		s.engine = e
	}
	s.left, _ = r.String("left_delimiter")
	s.right, _ = r.String("right_delimiter")
	if s.left == "" {
		s.left = map[string]string{engineGo: "{{", engineJet: "[["}[s.engine]
	}
	if s.right == "" {
		s.right = map[string]string{engineGo: "}}", engineJet: "]]"}[s.engine]
	}
	s.skipEmpty, _ = r.Bool("skip_empty")
	s.purge, _ = r.Bool("purge")
	if r.Has("data") {
		m, ok := p["data"].(map[string]any)
		if !ok {
			r.Errorf("data: must be a map, got %T", p["data"])
		} else if len(m) > 0 {
			s.data = normalise(m).(map[string]any)
		}
	}
	if r.Has("post") {
		s.post = parsePost(r, p["post"])
	}
	r.Unknown()
	return s, r.Errors()
}

// parsePost reads post: a list of maps of glob to command, each map's
// keys in sorted order (CCM ranges over a Go map).
func parsePost(r *props.Reader, v any) []postRule {
	list, ok := v.([]any)
	if !ok {
		r.Errorf("post: must be a list of maps of glob to command, got %T", v)
		return nil
	}
	var out []postRule
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			r.Errorf("post: item %d must be a map of glob to command, got %T", i, e)
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cmd, _ := m[k].(string)
			if k == "" {
				r.Errorf("post: item %d: the glob cannot be empty", i)
				continue
			}
			if _, err := path.Match(k, "x"); err != nil {
				r.Errorf("post: item %d: glob %q: %v", i, k, err)
				continue
			}
			if strings.TrimSpace(cmd) == "" {
				r.Errorf("post: item %d: the command for %q cannot be empty", i, k)
				continue
			}
			argv, err := shellwords.Split(cmd)
			if err != nil || len(argv) == 0 {
				r.Errorf("post: item %d: command %q: %v", i, cmd, err)
				continue
			}
			out = append(out, postRule{glob: k, argv: argv})
		}
	}
	return out
}

// command is the argv of rule r for the file at p: {} replaced by p, or p
// appended when no argument holds {} (CCM's rule).
func (r postRule) command(p string) []string {
	argv := []string{r.argv[0]}
	placeholder := false
	for _, a := range r.argv[1:] {
		if strings.Contains(a, "{}") {
			a = strings.ReplaceAll(a, "{}", p)
			placeholder = true
		}
		argv = append(argv, a)
	}
	if !placeholder {
		argv = append(argv, p)
	}
	return argv
}

// postFor lists the rules whose glob matches the base name of rel.
func (s spec) postFor(rel string) []postRule {
	var out []postRule
	for _, r := range s.post {
		if ok, _ := path.Match(r.glob, path.Base(rel)); ok {
			out = append(out, r)
		}
	}
	return out
}

// sourceDir resolves source against the manifest's directory.
func (s spec) sourceDir(workingDir string) (string, error) {
	if i := strings.Index(s.source, "://"); i > 0 {
		return "", fmt.Errorf("source: %q is a URL; scaffold renders a local directory (fetch it first, e.g. with archive)", s.source)
	}
	src := s.source
	if !path.IsAbs(src) {
		if workingDir == "" {
			return "", fmt.Errorf("source: %q is relative and the manifest has no directory; use an absolute path", s.source)
		}
		src = path.Join(workingDir, src)
	}
	return path.Clean(src), nil
}

// normalise turns JSON numbers that are whole into ints, so that a port
// renders as 8080 and a million as 1000000, not 1e+06 (CCM's data comes
// from YAML, where they are ints).
func normalise(v any) any {
	switch t := v.(type) {
	case float64:
		if t == float64(int64(t)) && t < 1<<53 && t > -(1<<53) {
			return int(t)
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalise(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalise(e)
		}
		return out
	}
	return v
}
