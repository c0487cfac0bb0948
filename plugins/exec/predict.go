package main

import (
	"fmt"
	"path"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
	"github.com/ccm-dev/ccm/sdk/shellwords"
)

// predict is noop's look ahead for a command that would run: it fails when
// the program does not exist, as the real run would. It stays silent once
// an earlier resource would have changed the host (another type's, told by
// Request.AfterChanges, or an earlier exec of this run), since that change
// may install the program, and when a stat is refused: only evidence fails
// a resource. Shell commands are not predicted (words may be builtins).
func (e *execType) predict(h sdk.Host, req abi.Request, s spec) error {
	if !req.Noop || req.AfterChanges || e.noopRan.Load() || s.provider != providerPosix {
		return nil
	}
	argv, err := shellwords.Split(s.command)
	if err != nil || len(argv) == 0 {
		return nil
	}
	prog, dirs := argv[0], []string{""}
	if !strings.Contains(prog, "/") {
		dirs = strings.Split(pathOf(s.env), ":")
	}
	for _, dir := range dirs {
		cand := prog
		if dir != "" {
			if !path.IsAbs(dir) {
				continue
			}
			cand = path.Join(dir, prog)
		}
		st, err := h.Stat(abi.FSStatRequest{Path: cand, FollowSymlinks: true})
		if err != nil {
			return nil
		}
		if st.Exists && st.Type == "file" && st.Mode&0o111 != 0 {
			return nil
		}
	}
	if len(dirs) == 1 && dirs[0] == "" {
		return fmt.Errorf("the real run would fail to run %q: program %s does not exist or is not executable", s.command, prog)
	}
	return fmt.Errorf("the real run would fail to run %q: program %q not found in PATH %s", s.command, prog, pathOf(s.env))
}

// pathOf is the last PATH= of the child's environment.
func pathOf(env []string) string {
	p := defaultPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			p = v
		}
	}
	return p
}
