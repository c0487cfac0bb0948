package main

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// noopDirs remembers the directories a noop run of this plugin instance
// would have created (with their parents), so a later file in one of them
// is not predicted to fail for a missing parent.
type noopDirs struct {
	mu   sync.Mutex
	dirs map[string]bool
}

func (n *noopDirs) add(dir string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dirs == nil {
		n.dirs = map[string]bool{}
	}
	for d := dir; d != "/" && !n.dirs[d]; d = path.Dir(d) {
		n.dirs[d] = true
	}
}

func (n *noopDirs) has(dir string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dirs[dir]
}

// predict is noop's look ahead: the reason the real run would fail to carry
// out p, when the host's current state already shows it (a missing parent
// directory, an unknown owner or group), or nil. It stays silent once an
// earlier resource of another type would have changed the host
// (Request.AfterChanges), since that change may supply what is missing; a
// directory an earlier file resource would have created counts as there.
func (f *fileType) predict(h sdk.Host, req abi.Request, s spec, p plan) error {
	if !req.Noop || req.AfterChanges || (p.act != actWrite && p.act != actMkdir) {
		return nil
	}
	var problems []string
	if parent := path.Dir(s.name); p.act == actWrite && parent != s.name && !f.noop.has(parent) {
		st, err := h.Stat(abi.FSStatRequest{Path: parent, FollowSymlinks: true})
		switch {
		case err != nil:
			// A refused or failed stat is not evidence; the real run reports it.
		case !st.Exists:
			problems = append(problems, fmt.Sprintf("its parent directory %s does not exist (manage it with ensure: directory before this resource)", parent))
		case st.Type != "directory":
			problems = append(problems, fmt.Sprintf("its parent %s is %s, not a directory", parent, describeType(st)))
		}
	}
	if !isNumeric(s.owner) {
		if _, err := f.ids.uid(h, s.owner); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if !isNumeric(s.group) {
		if _, err := f.ids.gid(h, s.group); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the real run would fail to %s %s: %s", verb(p), s.name, strings.Join(problems, "; "))
	}
	if p.act == actMkdir {
		f.noop.add(s.name)
	}
	return nil
}

func verb(p plan) string {
	if p.act == actMkdir {
		return "create directory"
	}
	return "write"
}
