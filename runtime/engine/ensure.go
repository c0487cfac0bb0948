package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/ccm-dev/ccm/runtime/manifest"
	"github.com/ccm-dev/ccm/runtime/session"
)

// EnsureRequest is one resource applied on its own, outside a manifest:
// `ccm ensure TYPE ...` and `ccm ensure api pipe`.
type EnsureRequest struct {
	Type string
	// Properties are as in a manifest's direct form: name, ensure, the
	// type's own properties and the common ones (alias, provider, require,
	// subscribe, control, health_checks). Templates in them are expanded as
	// in a manifest, against the engine's facts and ExternalData (the data).
	Properties map[string]any
	// Dir is the working directory: relative paths (a file's source)
	// resolve here. "" is the process's working directory.
	Dir string
}

// ErrInvalidRequest: an EnsureRequest that cannot name a resource.
var ErrInvalidRequest = errors.New("invalid ensure request")

// ensureFile is the file name of the one-resource document Ensure builds;
// it never reaches the user (errors lose their "file:line: " prefix).
const ensureFile = "<ensure>"

// Ensure applies one resource exactly as a manifest holding only that
// resource would: the same parsing of common properties, plugin
// validation, control, deferred templates, require and subscribe, plugin
// apply, health checks and event. require and subscribe look in the
// engine's session, so give it (Options.Session) the events of earlier
// ensures; the new event is recorded there and reported too.
//
// A non-nil error means the request is invalid (unknown type or property,
// bad value) and nothing ran. A resource that ran and failed returns its
// event with Failed set and a nil error.
func (e *Engine) Ensure(ctx context.Context, req EnsureRequest) (*session.Event, error) {
	defer e.forgetHandles(ctx)
	switch {
	case req.Type == "":
		return nil, fmt.Errorf("%w: type is required", ErrInvalidRequest)
	case req.Type == applyType:
		return nil, fmt.Errorf("%w: type apply cannot be ensured on its own; use ccm apply MANIFEST", ErrInvalidRequest)
	case req.Properties == nil:
		return nil, fmt.Errorf("%w: properties are required (at least name)", ErrInvalidRequest)
	}
	dir := req.Dir
	if dir == "" {
		dir = "."
	}
	s, err := e.rootScope(ctx, dir, false)
	if err != nil {
		return nil, err
	}

	// A JSON document is a YAML one: parse it like any manifest, so that
	// common properties get the manifest's checks and messages.
	src, err := json.Marshal(map[string]any{
		"ccm": map[string]any{"resources": []any{map[string]any{req.Type: req.Properties}}},
	})
	if err != nil {
		return nil, fmt.Errorf("%w: properties: %v", ErrInvalidRequest, err)
	}
	doc, err := manifest.Parse(src, s.file)
	if err != nil {
		return nil, ensureError(s.file, err)
	}
	if len(doc.Resources) != 1 {
		return nil, fmt.Errorf("BUG: ensure document holds %d resources", len(doc.Resources))
	}
	p, err := e.loadDocument(ctx, s, doc, nil, nil)
	if err != nil {
		return nil, ensureError(s.file, err)
	}
	ev := e.runResource(ctx, s, p, p.resources[0])
	ev.Manifest = ""
	return ev, nil
}

// ensureError drops the "file:line: " prefixes of the in-memory document
// from err's lines: they would point at nothing the user wrote.
func ensureError(file string, err error) error {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(file) + `(:\d+)?: `)
	return &cleanError{msg: re.ReplaceAllString(err.Error(), ""), err: err}
}

// cleanError rewrites an error's message and keeps it for errors.Is.
type cleanError struct {
	msg string
	err error
}

func (c *cleanError) Error() string { return c.msg }
func (c *cleanError) Unwrap() error { return c.err }
