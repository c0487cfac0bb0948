package main

import (
	"path"
	"slices"
	"strings"

	"github.com/ccm-dev/ccm/plugins/internal/props"
	"github.com/ccm-dev/ccm/sdk/flat"
)

// spec is one resource's desired state, read from its properties.
type spec struct {
	name    string
	ensure  string
	content []byte
	// hasContent distinguishes content "" (an empty file) from unset or
	// null (attribute-only mode).
	hasContent bool
	source     string // as written; resolve with sourcePath
	owner      string
	group      string
	mode       uint32
	force      bool
	// hideDiff is show_diff: false (secrets): a content change is reported
	// without its text.
	hideDiff bool
}

// managesData reports whether the file's bytes are managed (content or
// source) rather than only its attributes.
func (s spec) managesData() bool { return s.hasContent || s.source != "" }

// parse reads properties and returns every problem found. At validate time
// the deferred content and source may still be unexpanded templates; nothing
// here depends on their final text.
func parse(name string, p map[string]any, provider string) (spec, []string) {
	return parseFlat(name, flat.FromMap(p), provider)
}

// parseFlat is parse for flat properties, as a batch's validation gives
// them (sdk.FlatPreparer): the same checks and messages, read without a
// map.
func parseFlat(name string, p *flat.Props, provider string) (spec, []string) {
	r := props.NewFlat(p)
	r.Known("name")
	s := spec{name: name, ensure: ensurePresent}

	if provider != "" && provider != providerPosix {
		r.Errorf("provider %q is not available for file; use %q", provider, providerPosix)
	}
	switch {
	case name == "":
		r.Errorf("name is required: the absolute path of the file")
	case !strings.HasPrefix(name, "/"):
		r.Errorf("name %q must be an absolute path", name)
	case path.Clean(name) != name:
		r.Errorf("name %q is not canonical; use %q", name, path.Clean(name))
	}
	if e, ok := r.String("ensure"); ok {
		if !slices.Contains(ensureValues, e) {
			r.Errorf("ensure %q is not valid for file; use one of %s", e, strings.Join(ensureValues, ", "))
		}
		s.ensure = e
	}
	if c, ok := r.Text("content"); ok {
		s.content, s.hasContent = []byte(c), true
	}
	if src, ok := r.String("source"); ok {
		if src == "" {
			r.Errorf("source must not be empty; remove it for attribute-only mode")
		}
		s.source = src
	}
	if s.hasContent && r.Has("source") {
		r.Errorf("content and source are mutually exclusive; set only one of them")
	}
	if s.ensure == ensureDirectory && (s.hasContent || r.Has("source")) {
		r.Errorf("content and source are only valid with ensure present, not directory")
	}

	required := s.ensure != ensureAbsent
	if o, ok := r.Text("owner"); o != "" {
		s.owner = o
	} else if required && (ok || !r.Has("owner")) {
		r.Errorf("owner is required unless ensure is absent: a user name or numeric uid")
	}
	if g, ok := r.Text("group"); g != "" {
		s.group = g
	} else if required && (ok || !r.Has("group")) {
		r.Errorf("group is required unless ensure is absent: a group name or numeric gid")
	}
	switch m, _ := r.Lookup("mode"); {
	case m.Kind() == flat.KindString:
		r.Known("mode")
		mode, err := parseMode(m.Str())
		if err != nil {
			r.Errorf("%v", err)
		}
		s.mode = mode
	case r.Has("mode"):
		// An unquoted YAML 0644 arrives as the number 420: refuse to guess.
		r.Errorf("mode must be a quoted octal string such as \"0644\", got %v", m.Any())
	case required:
		r.Errorf("mode is required unless ensure is absent: an octal string such as \"0644\"")
	}

	// Asked only when set: it is then a known key, which changes what an
	// unknown key's suggestion may be (kept as it was).
	if _, set := r.Lookup("show_diff"); set {
		if show, ok := r.Bool("show_diff"); ok && !show {
			s.hideDiff = true
		}
	}
	if f, ok := r.Bool("force"); ok && f {
		s.force = true
		if s.ensure != ensureAbsent {
			r.Errorf("force is only valid with ensure absent")
		}
		if name == "/" {
			r.Errorf("force is not allowed for \"/\"")
		}
	}
	r.Unknown()
	return s, r.Errors()
}
