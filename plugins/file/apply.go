package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// Apply reads state, decides, acts unless noop, and re-checks after a real
// change. A stable file with content costs one host call.
func (f *fileType) Apply(h sdk.Host, req abi.Request) abi.Result {
	s, errs := parse(req.Name, req.Properties, req.Provider)
	if len(errs) > 0 {
		return abi.Result{Provider: providerPosix, Error: "invalid properties: " + strings.Join(errs, "; ")}
	}
	return f.apply(h, req, s)
}

// ApplyPrepared is Apply for a resource Prepare parsed: its properties are
// the ones validated, so they are not decoded or parsed again.
func (f *fileType) ApplyPrepared(h sdk.Host, req abi.Request, prepared any) abi.Result {
	s, ok := prepared.(*spec)
	if !ok || s.name != req.Name {
		// The host pairs a handle with its resource; a mismatch is its bug.
		return abi.Result{Provider: providerPosix, Error: fmt.Sprintf("the validated resource of this handle is not %s; this is a bug in the host, run again", req.Name)}
	}
	return f.apply(h, req, *s)
}

// apply is Apply once the properties are parsed into s.
func (f *fileType) apply(h sdk.Host, req abi.Request, s spec) abi.Result {
	res := abi.Result{Provider: providerPosix}
	statReq := abi.FSStatRequest{Path: s.name, Checksum: s.ensure == ensurePresent && s.managesData()}
	st, err := h.Stat(statReq)
	if err != nil {
		res.Error = errReadState(s.name, err).Error()
		return res
	}
	res.FinalEnsure = observed(st)
	if !req.NoState {
		res.State = stateDoc(s.name, st)
	}

	src, wantSum, err := desiredData(h, s, req.WorkingDir)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	p, err := f.decide(h, s, st, wantSum)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if p.act == actNone {
		return res
	}
	if err := f.predict(h, req, s, p); err != nil {
		res.Error = err.Error()
		return res
	}
	if req.Diff && p.act == actWrite {
		// Read before the write: the old content is gone after it.
		res.Diff = contentDiff(h, req, s, st, src)
	}
	if req.Noop {
		res.Changed, res.NoopMessage = true, p.noop
		res.Messages = p.done()[1:]
		return res
	}
	if err := act(h, s, p, src); err != nil {
		res.Error = err.Error()
		return res
	}

	st, err = h.Stat(statReq)
	if err != nil {
		res.Error = "failed to reach desired state: " + errReadState(s.name, err).Error()
		return res
	}
	res.FinalEnsure = observed(st)
	if !req.NoState {
		res.State = stateDoc(s.name, st)
	}
	left, err := f.drift(h, s, st, wantSum)
	switch {
	case err != nil:
		res.Error = "failed to reach desired state: " + err.Error()
	case len(left) > 0:
		res.Error = "failed to reach desired state: " + joinDiffs(left)
	default:
		res.Changed, res.Messages = true, p.done()
	}
	return res
}

// desiredData returns the absolute source path (if any) and the desired
// sha256 of the content: computed here for content, by the host for a
// source, so file bytes never cross into the plugin.
func desiredData(h sdk.Host, s spec, workingDir string) (src, sum string, err error) {
	switch {
	case s.ensure != ensurePresent || !s.managesData():
		return "", "", nil
	case s.hasContent:
		b := sha256.Sum256(s.content)
		return "", hex.EncodeToString(b[:]), nil
	}
	src = path.Clean(s.source) // the host takes canonical paths only
	if !path.IsAbs(src) {
		if workingDir == "" {
			return "", "", fmt.Errorf("source %q is relative and the request has no working directory; use an absolute path", s.source)
		}
		src = path.Join(workingDir, src)
	}
	st, err := h.Stat(abi.FSStatRequest{Path: src, FollowSymlinks: true, Checksum: true})
	switch {
	case err != nil:
		return "", "", fmt.Errorf("reading source %s: %w", src, err)
	case !st.Exists:
		return "", "", fmt.Errorf("source %s does not exist; source paths are relative to the manifest directory", src)
	case st.Type != "file":
		return "", "", fmt.Errorf("source %s is %s, not a regular file", src, describeType(st))
	}
	return src, st.SHA256, nil
}

// act performs a plan through mutating host calls.
func act(h sdk.Host, s spec, p plan, src string) error {
	switch p.act {
	case actWrite:
		err := h.WriteFile(abi.FSWriteRequest{
			Path: s.name, Content: s.content, Source: src,
			Mode: s.mode, Owner: s.owner, Group: s.group,
		})
		var ce *abi.CallError
		if errors.As(err, &ce) && ce.Code == abi.CodeNotFound {
			return fmt.Errorf("writing %s: %w; its parent directory %s must exist (manage it with ensure: directory), as must owner %q and group %q",
				s.name, err, path.Dir(s.name), s.owner, s.group)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", s.name, err)
		}
	case actMkdir:
		err := h.Mkdir(abi.FSMkdirRequest{
			Path: s.name, Mode: dirMode(s.mode), Owner: s.owner, Group: s.group, Parents: true,
		})
		if err != nil {
			return fmt.Errorf("creating directory %s: %w", s.name, err)
		}
	case actRemove:
		if err := h.Remove(abi.FSRemoveRequest{Path: s.name, Recursive: p.recursive}); err != nil {
			return fmt.Errorf("removing %s: %w", s.name, err)
		}
	case actAttrs:
		return fixAttrs(h, s, p.attrs)
	}
	return nil
}

// fixAttrs changes only the attributes that differ, in place: unchanged
// content is never rewritten.
func fixAttrs(h sdk.Host, s spec, a attrDrift) error {
	if a.owner || a.group {
		req := abi.FSChownRequest{Path: s.name}
		if a.owner {
			req.Owner = s.owner
		}
		if a.group {
			req.Group = s.group
		}
		if err := h.Chown(req); err != nil {
			return fmt.Errorf("changing owner/group of %s: %w", s.name, err)
		}
	}
	if a.mode {
		if err := h.Chmod(abi.FSChmodRequest{Path: s.name, Mode: s.wantMode()}); err != nil {
			return fmt.Errorf("changing mode of %s: %w", s.name, err)
		}
	}
	return nil
}

func errReadState(name string, err error) error {
	return fmt.Errorf("reading the state of %s: %w", name, err)
}
