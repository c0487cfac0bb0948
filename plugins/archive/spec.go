package main

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/ccm-dev/ccm/plugins/internal/props"
)

// spec is one archive resource, read from its properties.
type spec struct {
	name          string
	ensure        string
	url           string
	checksum      string // lower-case hex, "" = none
	extractParent string
	creates       string
	cleanup       bool
	owner, group  string
	username      string
	password      string
	headers       []string // "Name: value", sorted
	format        string   // tar.gz, tar or zip
	tune          tuning   // from archiveType, not a property
}

// parse reads properties and returns every problem found. Values that
// still hold templates (validate time) skip the checks of their form.
func parse(name string, p map[string]any, provider string, final bool) (spec, []string) {
	r := props.New(p)
	r.Known("name")
	s := spec{name: name, ensure: ensurePresent}
	settled := func(v string) bool { return final || !props.HasTemplate(v) }
	if provider != "" && provider != providerHTTP {
		r.Errorf("provider %q is not available for archive; use %q", provider, providerHTTP)
	}
	if e, ok := r.String("ensure"); ok {
		if e != ensurePresent && e != ensureAbsent {
			r.Errorf("ensure %q is not valid for archive; use present or absent", e)
		}
		s.ensure = e
	}
	if settled(name) {
		switch {
		case name == "":
			r.Errorf("name is required: the absolute path the archive is saved to")
		case !path.IsAbs(name) || path.Clean(name) != name:
			r.Errorf("name %q must be an absolute, clean path", name)
		case formatOf(name) == "":
			r.Errorf("name %q must end in .zip, .tar.gz, .tgz or .tar", name)
		}
	}
	s.format = formatOf(name)
	s.url, _ = r.String("url")
	if settled(s.url) {
		checkURL(r, s.url, s.format, settled(name))
	}
	if c, ok := r.String("checksum"); ok && settled(c) {
		if b, err := hex.DecodeString(c); err != nil || len(b) != 32 {
			r.Errorf("checksum %q must be a sha256 in hex (64 digits)", c)
		}
		s.checksum = strings.ToLower(c)
	} else if ok {
		s.checksum = c
	}
	for key, dst := range map[string]*string{"extract_parent": &s.extractParent, "creates": &s.creates} {
		if v, ok := r.String(key); ok {
			if settled(v) && (!path.IsAbs(v) || path.Clean(v) != v) {
				r.Errorf("%s %q must be an absolute, clean path", key, v)
			}
			*dst = v
		}
	}
	s.cleanup, _ = r.Bool("cleanup")
	if s.cleanup && s.extractParent == "" {
		r.Errorf("cleanup requires extract_parent to be set")
	}
	if s.cleanup && s.creates == "" {
		r.Errorf("cleanup requires creates to be set, to know on later runs that the archive was extracted")
	}
	s.owner, _ = r.String("owner")
	s.group, _ = r.String("group")
	if s.ensure != ensureAbsent {
		if s.owner == "" {
			r.Errorf("owner is required (the owner of the archive and of what it extracts)")
		}
		if s.group == "" {
			r.Errorf("group is required (the group of the archive and of what it extracts)")
		}
	}
	s.username, _ = r.String("username")
	s.password, _ = r.String("password")
	if r.Has("headers") {
		m, ok := p["headers"].(map[string]any)
		if !ok {
			r.Errorf("property \"headers\" must be a map of header name to value")
		}
		for k, v := range m {
			vs, ok := v.(string)
			if !ok {
				r.Errorf("header %q must be a string", k)
				continue
			}
			if k == "" || strings.ContainsAny(k, ": \t\r\n") || strings.ContainsAny(vs, "\r\n") {
				r.Errorf("header %q is not a valid HTTP header name and value", k)
				continue
			}
			s.headers = append(s.headers, k+": "+vs)
		}
		sort.Strings(s.headers)
	}
	r.Unknown()
	return s, r.Errors()
}

func checkURL(r *props.Reader, raw, nameFormat string, nameSettled bool) {
	if raw == "" {
		r.Errorf("url is required: the http or https URL of the archive")
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		r.Errorf("url is not valid: %v", err)
		return
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		r.Errorf("url must be absolute, http:// or https://")
		return
	}
	if u.User != nil {
		r.Errorf("url must not carry credentials; use username and password")
	}
	base := path.Base(u.Path)
	f := formatOf(base)
	switch {
	case base == "." || base == "/" || base == "":
		r.Errorf("url must have a filename in the path")
	case f == "":
		r.Errorf("url filename must end in .zip, .tar.gz, .tgz, or .tar")
	case nameSettled && nameFormat != "" && f != nameFormat:
		r.Errorf("url and name must have the same archive type: url is %s, name is %s", f, nameFormat)
	}
}

// formatOf is the archive type of a file name: tar.gz (also .tgz), tar,
// zip, or "".
func formatOf(name string) string {
	switch {
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		return "tar.gz"
	case strings.HasSuffix(name, ".tar"):
		return "tar"
	case strings.HasSuffix(name, ".zip"):
		return "zip"
	}
	return ""
}

func (s spec) String() string { return fmt.Sprintf("archive#%s", s.name) }
