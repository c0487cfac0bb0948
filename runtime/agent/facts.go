package agent

import (
	"context"
	"sync"
	"time"
)

// FactsCache gathers facts at most once per Every: runs within the bound
// share the facts gathered first (an Every of zero gathers for every
// run). A failed gathering is not kept: the next run tries again.
type FactsCache struct {
	Every   time.Duration
	Load    func(ctx context.Context) (map[string]any, []string, error)
	Now     func() time.Time // nil: time.Now
	Metrics *Metrics

	mu    sync.Mutex
	facts map[string]any
	at    time.Time
}

// Get returns the facts and how old they are (zero when just gathered);
// warnings come from a gathering made now.
func (c *FactsCache) Get(ctx context.Context) (facts map[string]any, age time.Duration, warnings []string, err error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.facts != nil && c.Every > 0 {
		if age := now().Sub(c.at); age >= 0 && age < c.Every {
			return c.facts, age, nil, nil
		}
	}
	start := time.Now()
	f, warnings, err := c.Load(ctx)
	c.Metrics.Facts(time.Since(start), err)
	if err != nil {
		return nil, 0, warnings, err
	}
	c.facts, c.at = f, now()
	return f, 0, warnings, nil
}
