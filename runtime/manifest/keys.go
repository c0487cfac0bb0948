package manifest

import (
	"fmt"
	"slices"
	"strings"
)

// Keys allowed at each position; everything else is rejected with its path
// (CCM ignores unknown keys, so typos like fail_on_eror silently did nothing).
var (
	topKeys         = []string{"ccm", "data", "hierarchy", "overrides"}
	ccmKeys         = []string{"fail_on_error", "plugins", "post_message", "pre_message", "resources", "resources_jet_file"}
	hierarchyKeys   = []string{"merge", "order"}
	controlKeys     = []string{"if", "unless"}
	healthCheckKeys = []string{"command", "format", "goss_rules", "name", "timeout", "try_sleep", "tries"}
)

// unknownKey builds the error for key at a position allowing only allowed,
// suggesting the closest allowed key when the typo is small.
func unknownKey(key string, allowed []string) error {
	if s := closest(key, allowed); s != "" {
		return fmt.Errorf("%w; did you mean %q? allowed: %s", ErrUnknownKey, s, strings.Join(allowed, ", "))
	}
	return fmt.Errorf("%w; allowed: %s", ErrUnknownKey, strings.Join(allowed, ", "))
}

func allowedKey(key string, allowed []string) bool { return slices.Contains(allowed, key) }

// closest returns the allowed key within edit distance 2 of key, if any.
func closest(key string, allowed []string) string {
	best, bestD := "", 3
	for _, a := range allowed {
		if d := editDistance(key, a); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance, bounded to short keys: long
// inputs are never close to any allowed key, so they cost nothing.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
