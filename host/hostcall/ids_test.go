package hostcall

import (
	"os/user"
	"strconv"
	"testing"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// TestNameCache checks the cached lookups answer as the uncached ones do,
// and keep only what was found.
func TestNameCache(t *testing.T) {
	t.Parallel()
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	grp, err := user.LookupGroupId(me.Gid)
	if err != nil {
		t.Skip(err)
	}
	uid, _ := strconv.Atoi(me.Uid)
	gid, _ := strconv.Atoi(me.Gid)
	const unknownID = 1<<31 - 7
	const unknownName = "ccm-no-such-name"

	for _, c := range []*NameCache{nil, {}} {
		for range 2 { // the second round answers from the cache
			if got := c.owner(uid); got != me.Username {
				t.Fatalf("owner(%d) = %q, want %q", uid, got, me.Username)
			}
			if got := c.group(gid); got != grp.Name {
				t.Fatalf("group(%d) = %q, want %q", gid, got, grp.Name)
			}
			if got, cerr := c.uidOf(me.Username); cerr != nil || got != uid {
				t.Fatalf("uidOf(%q) = %d, %v, want %d", me.Username, got, cerr, uid)
			}
			if got, cerr := c.gidOf(grp.Name); cerr != nil || got != gid {
				t.Fatalf("gidOf(%q) = %d, %v, want %d", grp.Name, got, cerr, gid)
			}
			if got := c.owner(unknownID); got != strconv.Itoa(unknownID) {
				t.Fatalf("owner of an unknown uid = %q, want its digits", got)
			}
			if _, cerr := c.uidOf(unknownName); cerr == nil || cerr.Code != abi.CodeNotFound {
				t.Fatalf("uidOf an unknown name: %v, want not_found", cerr)
			}
			if _, cerr := c.gidOf(unknownName); cerr == nil || cerr.Code != abi.CodeNotFound {
				t.Fatalf("gidOf an unknown name: %v, want not_found", cerr)
			}
		}
		if c == nil {
			continue
		}
		if _, ok := c.users[unknownID]; ok {
			t.Fatal("an unknown uid was cached")
		}
		if _, ok := c.uids[unknownName]; ok {
			t.Fatal("an unknown user name was cached")
		}
		if c.users[uid] != me.Username || c.uids[me.Username] != uid || c.groups[gid] != grp.Name || c.gids[grp.Name] != gid {
			t.Fatalf("found names not cached: %+v", c)
		}
	}
}
