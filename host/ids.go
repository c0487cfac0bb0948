package host

import (
	"context"
	"errors"
	"os/user"
	"strconv"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// allDigits reports whether s is a non-empty run of ASCII digits: such an
// owner or group is always an id, never a name (shared/spec/resources.md).
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

// uidOf resolves an owner (name or all-digit uid); "" = -1, unchanged.
func uidOf(owner string) (int, *abi.CallError) {
	switch {
	case owner == "":
		return -1, nil
	case allDigits(owner):
		return parseID("user", owner)
	}
	u, err := user.Lookup(owner)
	if err != nil {
		return 0, idLookupError("user", owner, err)
	}
	return parseID("user", u.Uid)
}

// gidOf resolves a group (name or all-digit gid); "" = -1, unchanged.
func gidOf(group string) (int, *abi.CallError) {
	switch {
	case group == "":
		return -1, nil
	case allDigits(group):
		return parseID("group", group)
	}
	g, err := user.LookupGroup(group)
	if err != nil {
		return 0, idLookupError("group", group, err)
	}
	return parseID("group", g.Gid)
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

// ownerName is the user name of uid, or the uid in digits when unknown.
func ownerName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return id
}

// groupName is the group name of gid, or the gid in digits when unknown.
func groupName(gid int) string {
	id := strconv.Itoa(gid)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
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

func userLookup(_ context.Context, st *callState, req abi.UserLookupRequest) (any, *abi.CallError) {
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

func groupLookup(_ context.Context, st *callState, req abi.GroupLookupRequest) (any, *abi.CallError) {
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
