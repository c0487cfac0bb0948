package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// archiveType implements sdk.Resource; it keeps nothing between resources.
// tune is zero in ccm; tests lower it.
type archiveType struct{ tune tuning }

var _ sdk.Resource = (*archiveType)(nil)

// Validate checks the properties statically.
func (*archiveType) Validate(req abi.ValidateRequest) []string {
	name, _ := req.Properties["name"].(string)
	_, errs := parse(name, req.Properties, req.Provider, false)
	return errs
}

// observed is what Status reads: the archive file and the creates path.
type observed struct {
	exists        bool
	checksum      string
	owner, group  string
	uid, gid      int
	size          int64
	mtime         int64
	createsExists bool
}

func observe(h sdk.Host, s spec) (observed, error) {
	var o observed
	st, err := h.Stat(abi.FSStatRequest{Path: s.name, Checksum: true})
	if err != nil {
		return o, fmt.Errorf("stat %s: %w", s.name, err)
	}
	if st.Exists {
		if st.Type != "file" {
			return o, fmt.Errorf("%s exists as a %s, not a file", s.name, st.Type)
		}
		o.exists, o.checksum, o.owner, o.group = true, st.SHA256, st.Owner, st.Group
		o.uid, o.gid, o.size, o.mtime = st.UID, st.GID, st.Size, st.MTime
	}
	if s.creates != "" {
		c, err := h.Stat(abi.FSStatRequest{Path: s.creates})
		if err != nil {
			return o, fmt.Errorf("stat creates %s: %w", s.creates, err)
		}
		o.createsExists = c.Exists
	}
	return o, nil
}

func stateDoc(s spec, o observed) map[string]any {
	ensure := ensureAbsent
	meta := map[string]any{"name": s.name, "owner": o.owner, "group": o.group, "provider": providerHTTP}
	if o.exists {
		ensure = ensurePresent
		meta["archive_exists"] = true
		meta["checksum"] = o.checksum
		meta["size"] = o.size
		meta["mtime"] = time.Unix(o.mtime, 0).UTC().Format(time.RFC3339)
	}
	if o.createsExists {
		meta["creates_exists"] = true
	}
	return map[string]any{"protocol": stateProtocol, "type": typeName, "name": s.name, "ensure": ensure, "metadata": meta}
}

// Status reads the archive file (with its sha256) and the creates path.
func (*archiveType) Status(h sdk.Host, req abi.Request) abi.StatusResponse {
	s, _ := parse(req.Name, req.Properties, req.Provider, true)
	s.name = req.Name
	o, err := observe(h, s)
	if err != nil {
		return abi.StatusResponse{Provider: providerHTTP, Error: err.Error()}
	}
	ensure := ensureAbsent
	if o.exists {
		ensure = ensurePresent
	}
	return abi.StatusResponse{Provider: providerHTTP, FinalEnsure: ensure, State: stateDoc(s, o)}
}

// stable reports whether o is what s asks for, and why not (CCM's
// isDesiredState).
func stable(s spec, o observed) (bool, string) {
	if s.ensure == ensureAbsent {
		if o.exists {
			return false, "archive still exists"
		}
		return true, ""
	}
	if s.creates != "" && !o.createsExists {
		return false, "creates path missing: " + s.creates
	}
	if s.cleanup && s.creates == "" && o.exists {
		return false, "archive file still present despite cleanup"
	}
	if !s.cleanup && !o.exists {
		return false, "archive file missing"
	}
	if o.exists {
		if !idMatches(s.owner, o.owner, o.uid) {
			return false, fmt.Sprintf("owner mismatch: state=%s requested=%s", o.owner, s.owner)
		}
		if !idMatches(s.group, o.group, o.gid) {
			return false, fmt.Sprintf("group mismatch: state=%s requested=%s", o.group, s.group)
		}
		if s.checksum != "" && o.checksum != s.checksum {
			return false, fmt.Sprintf("checksum mismatch: state=%s requested=%s", o.checksum, s.checksum)
		}
	}
	return true, ""
}

func idMatches(want, name string, id int) bool {
	return want == "" || want == name || want == strconv.Itoa(id)
}

// Apply converges one archive: download when the file is missing or
// differs, extract when it was downloaded or creates is missing, clean up.
func (t *archiveType) Apply(h sdk.Host, req abi.Request) abi.Result {
	res := abi.Result{Provider: providerHTTP}
	s, errs := parse(req.Name, req.Properties, req.Provider, true)
	s.tune = t.tune
	if len(errs) > 0 {
		res.Error = strings.Join(errs, "; ")
		return res
	}
	o, err := observe(h, s)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.FinalEnsure = ensureOf(o)
	if !req.NoState {
		res.State = stateDoc(s, o)
	}
	if ok, _ := stable(s, o); ok {
		res.FinalEnsure = s.ensure // converged (an archive removed by cleanup is "present", as in CCM)
		return res
	}
	var noop []string
	do := func(what, would string, fn func() error) error {
		if req.Noop {
			noop = append(noop, would)
			return nil
		}
		if err := fn(); err != nil {
			return err
		}
		res.Messages = append(res.Messages, what)
		return nil
	}
	res.Changed = true
	if s.ensure == ensureAbsent {
		err = do("removed "+s.name, "Would have removed", func() error {
			return h.Remove(abi.FSRemoveRequest{Path: s.name})
		})
	} else {
		err = converge(h, s, o, do)
	}
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if req.Noop {
		res.NoopMessage = strings.Join(noop, ". ")
		return res
	}
	after, err := observe(h, s)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.FinalEnsure = ensureOf(after)
	if !req.NoState {
		res.State = stateDoc(s, after)
	}
	if ok, why := stable(s, after); !ok {
		res.Error = "failed to reach desired state: " + s.ensure + ": " + why
	} else {
		res.FinalEnsure = s.ensure
	}
	return res
}

func ensureOf(o observed) string {
	if o.exists {
		return ensurePresent
	}
	return ensureAbsent
}

// converge is the present branch of Apply, in CCM's order.
func converge(h sdk.Host, s spec, o observed, do func(what, would string, fn func() error) error) error {
	downloaded := false
	if !(o.exists && s.checksum != "" && o.checksum == s.checksum) {
		downloaded = true
		if err := do("downloaded "+redact(s.url), "Would have downloaded", func() error { return download(h, s) }); err != nil {
			return err
		}
	}
	if s.extractParent != "" && (downloaded || !o.createsExists) {
		if err := do("extracted into "+s.extractParent, "Would have extracted", func() error { return extract(h, s) }); err != nil {
			return err
		}
	}
	if s.cleanup {
		return do("removed "+s.name+" after extracting", "Would have cleaned up", func() error {
			err := h.Remove(abi.FSRemoveRequest{Path: s.name})
			var ce *abi.CallError
			if errors.As(err, &ce) && ce.Code == abi.CodeNotFound {
				return nil
			}
			return err
		})
	}
	return nil
}

// download fetches url into name through the host, which checks the net
// grant (and every redirect), writes under fs_write and verifies checksum
// before name is replaced.
func download(h sdk.Host, s spec) error {
	resp, err := h.Fetch(abi.NetFetchRequest{
		URL:      s.url,
		Headers:  s.headers,
		Username: s.username,
		Password: s.password,
		Dest:     s.name,
		Mode:     0o600,
		Owner:    s.owner,
		Group:    s.group,
		SHA256:   s.checksum,
	})
	if err != nil {
		return fmt.Errorf("download failed: %w", err)
	}
	if resp.Status != 200 || !resp.Written {
		return fmt.Errorf("download failed: HTTP request for %s failed with status %d", resp.URL, resp.Status)
	}
	return nil
}

// redact drops credentials and the query from a URL for messages.
func redact(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	return raw
}
