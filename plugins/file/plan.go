package main

import (
	"fmt"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

type action int

const (
	actNone action = iota
	actWrite
	actAttrs
	actMkdir
	actRemove
)

// plan is the decision for one resource: what to do and how noop says it.
type plan struct {
	act       action
	recursive bool      // actRemove of a directory with its contents
	attrs     attrDrift // actAttrs: which attributes to fix; actWrite: what the write changes
	noop      string
}

// done is the log line of a performed plan.
func (p plan) done() []string {
	out := []string{strings.Replace(p.noop, "Would have ", "", 1)}
	for _, d := range p.attrs.diffs {
		out = append(out, d.change())
	}
	return out
}

// decide is the decision table of docs/resources.md. st is the path's stat
// (not following a final symlink); wantSum the desired sha256 when content
// or source is managed.
func (f *fileType) decide(h sdk.Host, s spec, st abi.FSStatResponse, wantSum string) (plan, error) {
	switch s.ensure {
	case ensureAbsent:
		return decideAbsent(h, s, st)
	case ensureDirectory:
		switch {
		case !st.Exists:
			return plan{act: actMkdir, noop: "Would have created directory"}, nil
		case st.Type != "directory":
			return plan{}, fmt.Errorf("%s exists as %s; remove it before managing a directory there", s.name, describeType(st))
		}
		return f.decideAttrs(h, s, st)
	}
	switch {
	case st.Type == "directory":
		return plan{}, fmt.Errorf("%s exists as a directory; remove it first (ensure absent with force true) or use ensure directory", s.name)
	case s.managesData():
		// A symlink or special file is replaced by the atomic rename: the
		// link itself, never its target.
		switch {
		case !st.Exists:
			return plan{act: actWrite, noop: "Would have created the file"}, nil
		case st.Type != "file":
			return plan{act: actWrite, noop: "Would have replaced the " + kindOf(st) + " with a regular file"}, nil
		case !strings.EqualFold(st.SHA256, wantSum):
			// The write also sets owner, group and mode: say which change.
			a, _ := f.attrs(h, s, st) // an unknown owner fails the write or the noop prediction
			return plan{act: actWrite, attrs: a, noop: "Would have changed the content"}, nil
		}
	case !st.Exists:
		return plan{act: actWrite, noop: "Would have created an empty file with requested attributes"}, nil
	case st.Type != "file":
		return plan{}, fmt.Errorf("%s is %s, not a regular file; without content or source the file type only fixes attributes of regular files: set content or source to replace it, or manage the target path", s.name, describeType(st))
	}
	return f.decideAttrs(h, s, st)
}

func (f *fileType) decideAttrs(h sdk.Host, s spec, st abi.FSStatResponse) (plan, error) {
	a, err := f.attrs(h, s, st)
	if err != nil || !a.any() {
		return plan{}, err
	}
	return plan{act: actAttrs, attrs: a, noop: "Would have updated attributes"}, nil
}

func decideAbsent(h sdk.Host, s spec, st abi.FSStatResponse) (plan, error) {
	switch {
	case !st.Exists:
		return plan{}, nil
	case st.Type != "directory":
		// Files, symlinks (even to directories: only the link goes) and
		// special files are unlinked.
		return plan{act: actRemove, noop: "Would have removed the file"}, nil
	case s.force:
		return plan{act: actRemove, recursive: true, noop: "Would have recursively removed the directory"}, nil
	}
	entries, err := h.List(abi.FSListRequest{Path: s.name})
	if err != nil {
		return plan{}, fmt.Errorf("listing directory %s: %w", s.name, err)
	}
	if len(entries) > 0 {
		return plan{}, fmt.Errorf("%s is a directory with %d entries; set force: true to remove it with its contents", s.name, len(entries))
	}
	return plan{act: actRemove, noop: "Would have removed the directory"}, nil
}

// kindOf names what stat found in a word, for noop messages.
func kindOf(st abi.FSStatResponse) string {
	if st.Type == "symlink" {
		return "symlink"
	}
	return "special file"
}
