package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ccm-dev/ccm/runtime/data"
	"github.com/ccm-dev/ccm/runtime/facts"
	"github.com/ccm-dev/ccm/runtime/source"
	"github.com/ccm-dev/ccm/runtime/trust"
)

// inputOptions say which inputs a run reads (ccm apply, ccm ensure).
type inputOptions struct {
	facts   facts.Options // --facts FILE and --fact KEY=VALUE
	readEnv bool          // read ./.env into Environ
	data    []string      // --data KEY=VALUE or FILE, in order
	// hiera is the Hiera source ("" none), resolved against the facts with
	// data as a layer over it; a missing hieraOptional file is no error
	// (ensure's default .hiera).
	hiera         string
	hieraOptional bool
	fetcher       *source.Fetcher // reads a kv:// Hiera source (remote.go)
	grantsFile    string          // --grants FILE, "" for the unconfined root
}

// inputs are what a run reads before any plugin runs.
type inputs struct {
	facts    map[string]any
	environ  map[string]string // .env over the process environment
	external map[string]any    // engine.Options.ExternalData
	grants   trust.Chain
}

// loadInputs is the one input loader of apply and ensure: facts, .env,
// --data, Hiera and --grants, in the order a failure is cheapest. Warnings
// go to warn. An error is a usage error: nothing ran.
func loadInputs(ctx context.Context, warn io.Writer, o inputOptions) (*inputs, error) {
	fts, err := loadFacts(ctx, warn, o.facts)
	if err != nil {
		return nil, err
	}
	var dotenv map[string]string
	if o.readEnv {
		if dotenv, err = data.LoadDotEnv(".env"); err != nil {
			return nil, err
		}
	}
	external, err := data.ParseAssignments(o.data)
	if err != nil {
		return nil, err
	}
	if o.hiera != "" {
		// Precedence at every level: child's own < apply data < Hiera <
		// --data, so --data is a layer over the resolved Hiera data and
		// may satisfy its @require.
		resolved, err := resolveHiera(ctx, warn, o.hiera, o.hieraOptional, o.fetcher, fts, external)
		if err != nil {
			return nil, fmt.Errorf("--hiera: %w", err)
		}
		if resolved != nil {
			external = resolved
		}
	}
	grants, err := loadGrants(o.grantsFile)
	if err != nil {
		return nil, err
	}
	return &inputs{facts: fts, environ: data.Environ(dotenv), external: external, grants: grants}, nil
}

// loadFacts gathers the facts (facts.Load) and prints its warnings.
func loadFacts(ctx context.Context, warn io.Writer, o facts.Options) (map[string]any, error) {
	fts, warnings, err := facts.Load(ctx, o)
	warnAll(warn, warnings)
	return fts, err
}

// errHieraSource marks a Hiera source that could not be read, as opposed
// to one that did not resolve (hiera parse exits differently).
var errHieraSource = errors.New("hiera source")

// resolveHiera loads the Hiera document src (a path, URL or kv:// through
// f) and resolves it against fts, layers merged over the result. It returns nil, nil for an
// optional file that does not exist. A read error wraps errHieraSource.
func resolveHiera(ctx context.Context, warn io.Writer, src string, optional bool, f *source.Fetcher, fts map[string]any, layers ...map[string]any) (map[string]any, error) {
	b, err := loadHieraSource(ctx, src, f)
	if err != nil {
		if optional && errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, sourceError{err}
	}
	out, warnings, err := data.ResolveDocument(b, src, fts, layers...)
	warnAll(warn, warnings)
	return out, err
}

// sourceError is a read error of a Hiera source: its text unchanged.
type sourceError struct{ error }

func (e sourceError) Unwrap() []error { return []error{e.error, errHieraSource} }

// loadGrants reads --grants FILE: the root scope's one grant, nil for "".
func loadGrants(file string) (trust.Chain, error) {
	if file == "" {
		return nil, nil
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--grants: %w", err)
	}
	g, err := trust.ParseGrant(src)
	if err != nil {
		return nil, fmt.Errorf("--grants %s: %w", file, err)
	}
	return trust.Chain{g}, nil
}

func warnAll(w io.Writer, warnings []string) {
	for _, s := range warnings {
		fmt.Fprintf(w, "ccm: warning: %s\n", s)
	}
}
