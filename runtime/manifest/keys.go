package manifest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ccm-dev/ccm/internal/suggest"
)

// Keys allowed at each position; everything else is rejected with its path
// (CCM ignores unknown keys, so typos like fail_on_eror silently did nothing).
var (
	topKeys         = []string{"ccm", "data", "hierarchy", "overrides"}
	ccmKeys         = []string{"fail_on_error", "plugins", "post_message", "pre_message", "resources", "resources_jet_file"}
	hierarchyKeys   = []string{"merge", "order"}
	controlKeys     = []string{"if", "unless"}
	healthCheckKeys = []string{"command", "format", "goss_rules", "name", "timeout", "try_sleep", "tries"}
	// registrationKeys are CCM's register_when_stable entry keys.
	registrationKeys = []string{"address", "annotations", "cluster", "port", "priority", "protocol", "service", "ttl"}
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
	return suggest.Closest(key, allowed)
}
