package facts

import (
	"os"
	"os/user"
	"strconv"
)

// userFacts describes the user ccm runs as: user.{name, uid, group, gid,
// home}. CCM has no such family; ccm adds it so a manifest can default file
// ownership to the invoking user ("{{ Facts.user.name }}"), as `ccm ensure
// file` does, without hard-coding root.
func userFacts() map[string]any {
	uid, gid := os.Getuid(), os.Getgid()
	out := map[string]any{
		"uid":   uid,
		"gid":   gid,
		"name":  strconv.Itoa(uid),
		"group": strconv.Itoa(gid),
		"home":  "",
	}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		out["name"] = u.Username
		out["home"] = u.HomeDir
	}
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		out["group"] = g.Name
	}
	return out
}
