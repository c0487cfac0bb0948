package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// diff is one way the path differs from the desired state.
type diff struct {
	what, have, want string
}

// String reads as a reason: "mode is 0600, want 0644".
func (d diff) String() string { return fmt.Sprintf("%s is %s, want %s", d.what, d.have, d.want) }

// change reads as a log line: "mode 0600 -> 0644".
func (d diff) change() string { return fmt.Sprintf("%s %s -> %s", d.what, d.have, d.want) }

func joinDiffs(ds []diff) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return strings.Join(out, "; ")
}

// attrDrift says which attributes differ, so only those are changed.
type attrDrift struct {
	owner, group, mode bool
	diffs              []diff
}

func (a attrDrift) any() bool { return a.owner || a.group || a.mode }

// wantMode is the mode to compare with: directories get x where r or w.
func (s spec) wantMode() uint32 {
	if s.ensure == ensureDirectory {
		return dirMode(s.mode)
	}
	return s.mode
}

// attrs compares owner, group (numerically) and mode (numerically; CCM
// compared strings, so "600" never converged).
func (f *fileType) attrs(h sdk.Host, s spec, st abi.FSStatResponse) (attrDrift, error) {
	var a attrDrift
	same, err := f.ids.userIs(h, s.owner, st.UID, st.Owner)
	if err != nil {
		return a, err
	}
	if !same {
		a.owner = true
		a.diffs = append(a.diffs, diff{"owner", idText(st.Owner, st.UID), s.owner})
	}
	if same, err = f.ids.groupIs(h, s.group, st.GID, st.Group); err != nil {
		return a, err
	}
	if !same {
		a.group = true
		a.diffs = append(a.diffs, diff{"group", idText(st.Group, st.GID), s.group})
	}
	if want := s.wantMode(); st.Mode&0o7777 != want {
		a.mode = true
		a.diffs = append(a.diffs, diff{"mode", formatMode(st.Mode & 0o7777), formatMode(want)})
	}
	return a, nil
}

// drift lists every difference from the desired state: the re-check after a
// change. wantSum is the desired sha256 when the content is managed.
func (f *fileType) drift(h sdk.Host, s spec, st abi.FSStatResponse, wantSum string) ([]diff, error) {
	switch s.ensure {
	case ensureAbsent:
		if st.Exists {
			return []diff{{"path", describeType(st), "absent"}}, nil
		}
		return nil, nil
	case ensureDirectory:
		if st.Type != "directory" {
			return []diff{{"path", describeType(st), "a directory"}}, nil
		}
	default:
		if st.Type != "file" {
			return []diff{{"path", describeType(st), "a regular file"}}, nil
		}
		if s.managesData() && !strings.EqualFold(st.SHA256, wantSum) {
			return []diff{{"sha256", st.SHA256, wantSum}}, nil
		}
	}
	a, err := f.attrs(h, s, st)
	return a.diffs, err
}

// describeType names what stat found, for messages.
func describeType(st abi.FSStatResponse) string {
	switch {
	case !st.Exists:
		return "absent"
	case st.Type == "file":
		return "a regular file"
	case st.Type == "directory":
		return "a directory"
	case st.Type == "symlink":
		return "a symlink to " + strconv.Quote(st.LinkTarget)
	}
	return "a special file"
}

// idText shows a stat owner or group: "root (0)", or the bare id when the
// host found no name for it.
func idText(name string, id int) string {
	if name == "" || name == strconv.Itoa(id) {
		return strconv.Itoa(id)
	}
	return fmt.Sprintf("%s (%d)", name, id)
}
