package main

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// idCache resolves user and group names to ids through the host, once per
// name per plugin instance. Only hits are kept: a missing user may be
// created by a later resource of the same run.
type idCache struct {
	mu     sync.Mutex
	users  map[string]int
	groups map[string]int
}

func newIDCache() *idCache {
	return &idCache{users: map[string]int{}, groups: map[string]int{}}
}

// isNumeric reports whether s is all digits: digits are always an id, never
// a name.
func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// userIs reports whether want (a name or uid) is the user with id uid, whose
// name stat reported as name. Equal names need no lookup.
func (c *idCache) userIs(h sdk.Host, want string, uid int, name string) (bool, error) {
	if isNumeric(want) {
		n, err := strconv.Atoi(want)
		return err == nil && n == uid, nil
	}
	if want == name {
		return true, nil
	}
	id, err := c.uid(h, want)
	return id == uid, err
}

// groupIs is userIs for groups.
func (c *idCache) groupIs(h sdk.Host, want string, gid int, name string) (bool, error) {
	if isNumeric(want) {
		n, err := strconv.Atoi(want)
		return err == nil && n == gid, nil
	}
	if want == name {
		return true, nil
	}
	id, err := c.gid(h, want)
	return id == gid, err
}

func (c *idCache) uid(h sdk.Host, name string) (int, error) {
	c.mu.Lock()
	id, ok := c.users[name]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	u, err := h.LookupUser(abi.UserLookupRequest{Name: name})
	if err != nil {
		return 0, fmt.Errorf("looking up owner %q: %w; create the user first or use a numeric uid", name, err)
	}
	c.mu.Lock()
	c.users[name] = u.UID
	c.mu.Unlock()
	return u.UID, nil
}

func (c *idCache) gid(h sdk.Host, name string) (int, error) {
	c.mu.Lock()
	id, ok := c.groups[name]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	g, err := h.LookupGroup(abi.GroupLookupRequest{Name: name})
	if err != nil {
		return 0, fmt.Errorf("looking up group %q: %w; create the group first or use a numeric gid", name, err)
	}
	c.mu.Lock()
	c.groups[name] = g.GID
	c.mu.Unlock()
	return g.GID, nil
}
