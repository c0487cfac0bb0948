package facts

import (
	"context"
	"fmt"
	"sort"
	"time"
)

// DefaultTimeout bounds the gathering of all built-in families together. A
// family that is not done by then (a hung NFS mount under statfs, a slow
// NSS lookup) is left out with a warning rather than stalling every run.
const DefaultTimeout = 2 * time.Second

// family is one top-level key of the fact tree and the function that
// gathers its value.
type family struct {
	name   string
	gather func(context.Context) (map[string]any, error)
}

// builtinFamilies are gathered in parallel; their names are the top-level
// keys `ccm facts` prints.
func builtinFamilies() []family {
	return []family{
		{"host", hostFacts},
		{"network", networkFacts},
		{"partition", partitionFacts},
		{"cpu", cpuFacts},
		{"memory", memoryFacts},
		{"user", func(context.Context) (map[string]any, error) { return userFacts(), nil }},
	}
}

// GatherSystem gathers the built-in families in parallel and returns what
// finished within timeout, plus one warning per family left out (failed or
// too slow). It never fails: a host where nothing can be read still gets a
// (smaller) fact tree.
func GatherSystem(ctx context.Context, timeout time.Duration) (map[string]any, []string) {
	return gatherFamilies(ctx, timeout, builtinFamilies())
}

func gatherFamilies(ctx context.Context, timeout time.Duration, fams []family) (map[string]any, []string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		name string
		val  map[string]any
		err  error
	}
	// Buffered so a family finishing after the deadline does not block
	// forever; its goroutine ends when its syscall returns.
	results := make(chan result, len(fams))
	for _, f := range fams {
		go func() {
			v, err := f.gather(ctx)
			results <- result{f.name, v, err}
		}()
	}
	out := make(map[string]any, len(fams))
	var warnings []string
	pending := make(map[string]bool, len(fams))
	for _, f := range fams {
		pending[f.name] = true
	}
	for range fams {
		select {
		case r := <-results:
			delete(pending, r.name)
			if r.err != nil {
				warnings = append(warnings, fmt.Sprintf("facts: %s family left out: %v", r.name, r.err))
				continue
			}
			out[r.name] = r.val
		case <-ctx.Done():
			names := make([]string, 0, len(pending))
			for n := range pending {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				warnings = append(warnings, fmt.Sprintf("facts: %s family left out: not gathered within %v", n, timeout))
			}
			return out, warnings
		}
	}
	sort.Strings(warnings)
	return out, warnings
}
