package hostcall

import (
	"context"
	"errors"
	"os/user"
	"strconv"
	"sync"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// allDigits reports whether s is a non-empty run of ASCII digits: such an
// owner or group is always an id, never a name (docs/resources.md).
func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func parseID(kind, s string) (int, *abi.CallError) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 1<<32-1 {
		return 0, invalid("%s id %q is out of range", kind, s)
	}
	return int(n), nil
}

// uidOf resolves an owner (name or all-digit uid); "" = -1, unchanged. A
// name found is remembered in c (see NameCache).
func (c *NameCache) uidOf(owner string) (int, *abi.CallError) {
	switch {
	case owner == "":
		return -1, nil
	case allDigits(owner):
		return parseID("user", owner)
	}
	if id, ok := c.idOf(owner, func(c *NameCache) *map[string]int { return &c.uids }); ok {
		return id, nil
	}
	u, err := user.Lookup(owner)
	if err != nil {
		return 0, idLookupError("user", owner, err)
	}
	id, cerr := parseID("user", u.Uid)
	if cerr == nil {
		c.rememberID(owner, id, func(c *NameCache) *map[string]int { return &c.uids })
	}
	return id, cerr
}

// gidOf resolves a group (name or all-digit gid); "" = -1, unchanged. A
// name found is remembered in c.
func (c *NameCache) gidOf(group string) (int, *abi.CallError) {
	switch {
	case group == "":
		return -1, nil
	case allDigits(group):
		return parseID("group", group)
	}
	if id, ok := c.idOf(group, func(c *NameCache) *map[string]int { return &c.gids }); ok {
		return id, nil
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, idLookupError("group", group, err)
	}
	id, cerr := parseID("group", g.Gid)
	if cerr == nil {
		c.rememberID(group, id, func(c *NameCache) *map[string]int { return &c.gids })
	}
	return id, cerr
}

func (c *NameCache) idOf(name string, table func(*NameCache) *map[string]int) (int, bool) {
	if c == nil {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id, ok := (*table(c))[name]
	return id, ok
}

func (c *NameCache) rememberID(name string, id int, table func(*NameCache) *map[string]int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := table(c)
	if *m == nil {
		*m = make(map[string]int)
	}
	(*m)[name] = id
}

func idLookupError(kind, name string, err error) *abi.CallError {
	var uu user.UnknownUserError
	var ug user.UnknownGroupError
	var uuid user.UnknownUserIdError
	var ugid user.UnknownGroupIdError
	if errors.As(err, &uu) || errors.As(err, &ug) || errors.As(err, &uuid) || errors.As(err, &ugid) {
		return &abi.CallError{Code: abi.CodeNotFound, Message: kind + " " + strconv.Quote(name) + " not found"}
	}
	return &abi.CallError{Code: abi.CodeIO, Message: "look up " + kind + " " + strconv.Quote(name) + ": " + err.Error()}
}

// NameCache remembers user and group names and ids for a Host's lifetime:
// every ccm_fs_stat reports the owner and group by name, every write with an
// owner resolves it to an id, and each lookup is a cgo call reading the
// passwd and group databases. Only lookups that found something are kept, so
// a name or id that appears during a run (a user created by an earlier
// resource) is looked up again. A nil cache looks up every time.
type NameCache struct {
	mu     sync.Mutex
	users  map[int]string // uid -> user name
	groups map[int]string // gid -> group name
	uids   map[string]int // user name -> uid
	gids   map[string]int // group name -> gid
}

// owner is the user name of uid, or the uid in digits when unknown.
func (c *NameCache) owner(uid int) string {
	return c.name(uid, func(c *NameCache) *map[int]string { return &c.users }, func(id string) (string, error) {
		u, err := user.LookupId(id)
		if err != nil {
			return "", err
		}
		return u.Username, nil
	})
}

// group is the group name of gid, or the gid in digits when unknown.
func (c *NameCache) group(gid int) string {
	return c.name(gid, func(c *NameCache) *map[int]string { return &c.groups }, func(id string) (string, error) {
		g, err := user.LookupGroupId(id)
		if err != nil {
			return "", err
		}
		return g.Name, nil
	})
}

func (c *NameCache) name(id int, table func(*NameCache) *map[int]string, lookup func(string) (string, error)) string {
	if c != nil {
		c.mu.Lock()
		name, ok := (*table(c))[id]
		c.mu.Unlock()
		if ok {
			return name
		}
	}
	digits := strconv.Itoa(id)
	name, err := lookup(digits)
	if err != nil {
		return digits
	}
	if c != nil {
		c.mu.Lock()
		m := table(c)
		if *m == nil {
			*m = make(map[int]string)
		}
		(*m)[id] = name
		c.mu.Unlock()
	}
	return name
}

func oneOf(name, id string) *abi.CallError {
	if (name == "") == (id == "") {
		return invalid("give exactly one of name and id")
	}
	if id != "" && !allDigits(id) {
		return invalid("id %q is not all digits", id)
	}
	return nil
}

func userLookup(_ context.Context, st *State, req abi.UserLookupRequest) (any, *abi.CallError) {
	if cerr := oneOf(req.Name, req.ID); cerr != nil {
		return nil, cerr
	}
	if cerr := allowed(st, access{call: abi.CallUserLookup}); cerr != nil {
		return nil, cerr
	}
	var u *user.User
	var err error
	if req.ID != "" {
		u, err = user.LookupId(req.ID)
	} else {
		u, err = user.Lookup(req.Name)
	}
	if err != nil {
		return nil, idLookupError("user", req.Name+req.ID, err)
	}
	uid, cerr := parseID("user", u.Uid)
	if cerr != nil {
		return nil, cerr
	}
	gid, cerr := parseID("group", u.Gid)
	if cerr != nil {
		return nil, cerr
	}
	return abi.UserLookupResponse{Name: u.Username, UID: uid, GID: gid, Home: u.HomeDir}, nil
}

func groupLookup(_ context.Context, st *State, req abi.GroupLookupRequest) (any, *abi.CallError) {
	if cerr := oneOf(req.Name, req.ID); cerr != nil {
		return nil, cerr
	}
	if cerr := allowed(st, access{call: abi.CallGroupLookup}); cerr != nil {
		return nil, cerr
	}
	var g *user.Group
	var err error
	if req.ID != "" {
		g, err = user.LookupGroupId(req.ID)
	} else {
		g, err = user.LookupGroup(req.Name)
	}
	if err != nil {
		return nil, idLookupError("group", req.Name+req.ID, err)
	}
	gid, cerr := parseID("group", g.Gid)
	if cerr != nil {
		return nil, cerr
	}
	return abi.GroupLookupResponse{Name: g.Name, GID: gid}, nil
}
