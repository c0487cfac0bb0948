package facts

import (
	"context"
	"time"

	"github.com/ccm-dev/ccm/runtime/data"
)

// Options says where a run's facts come from besides the system.
type Options struct {
	// Dirs are the custom facts directories in merge order; nil means
	// DefaultDirs(), an empty non-nil slice means none.
	Dirs []string
	// FactsFile is --facts FILE (YAML/JSON map), "" for none.
	FactsFile string
	// Facts are --fact KEY=VALUE pairs (dotted keys nest).
	Facts []string
	// Timeout bounds system fact gathering; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Load returns the facts a run sees, merged deep with later winning:
// system facts < custom facts (Dirs in order) < FactsFile < Facts
// (docs/manifests.md). Warnings (a family left out, a symlinked file
// skipped) are for the user and do not stop the run; the error is a bad
// custom facts file or override, which should.
func Load(ctx context.Context, opts Options) (map[string]any, []string, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dirs := opts.Dirs
	if dirs == nil {
		dirs = DefaultDirs()
	}
	// Custom facts are read while the system is gathered; both are
	// independent and the files are small.
	type custom struct {
		m        map[string]any
		warnings []string
		err      error
	}
	done := make(chan custom, 1)
	go func() {
		m, w, err := LoadCustom(dirs)
		done <- custom{m, w, err}
	}()
	sys, warnings := GatherSystem(ctx, timeout)
	c := <-done
	warnings = append(warnings, c.warnings...)
	if c.err != nil {
		return nil, warnings, c.err
	}
	out, err := WithOverrides(data.Merge(sys, c.m), opts.FactsFile, opts.Facts)
	if err != nil {
		return nil, warnings, err
	}
	return out, warnings, nil
}
