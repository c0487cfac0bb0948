package fakehost

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// Stat implements ccm_fs_stat.
func (h *Host) Stat(req abi.FSStatRequest) (abi.FSStatResponse, error) {
	if stop, err := h.begin(abi.CallFSStat); stop {
		return abi.FSStatResponse{}, err
	}
	if err := checkPath(req.Path); err != nil {
		return abi.FSStatResponse{}, err
	}
	stat := os.Lstat
	if req.FollowSymlinks {
		stat = os.Stat
	}
	fi, err := stat(req.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return abi.FSStatResponse{Exists: false}, nil
	}
	if err != nil {
		return abi.FSStatResponse{}, osErr(err)
	}
	sys := fi.Sys().(*syscall.Stat_t)
	resp := abi.FSStatResponse{
		Exists: true,
		Type:   fileType(fi.Mode()),
		Mode:   sys.Mode & 0o7777,
		UID:    int(sys.Uid),
		GID:    int(sys.Gid),
		Owner:  userName(int(sys.Uid)),
		Group:  groupName(int(sys.Gid)),
		Size:   fi.Size(),
		MTime:  fi.ModTime().Unix(),
	}
	if resp.Type == "symlink" {
		resp.LinkTarget, _ = os.Readlink(req.Path)
	}
	if req.Checksum && resp.Type == "file" {
		sum, err := sha256File(req.Path)
		if err != nil {
			return abi.FSStatResponse{}, osErr(err)
		}
		resp.SHA256 = sum
	}
	return resp, nil
}

// ReadFile implements ccm_fs_read.
func (h *Host) ReadFile(req abi.FSReadRequest) ([]byte, error) {
	if stop, err := h.begin(abi.CallFSRead); stop {
		return nil, err
	}
	if err := checkPath(req.Path); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(req.Path)
	if err != nil {
		return nil, osErr(err)
	}
	if req.MaxBytes > 0 && int64(len(b)) > req.MaxBytes {
		return nil, callErr(abi.CodeTooLarge, "%s is %d bytes, more than max_bytes %d", req.Path, len(b), req.MaxBytes)
	}
	return b, nil
}

// WriteFile implements ccm_fs_write: temp file beside the target, chmod,
// write, fsync, chown, rename.
func (h *Host) WriteFile(req abi.FSWriteRequest) error {
	if stop, err := h.begin(abi.CallFSWrite); stop {
		return err
	}
	if err := checkPath(req.Path); err != nil {
		return err
	}
	uid, gid, err := ids(req.Owner, req.Group)
	if err != nil {
		return err
	}
	content := io.Reader(nil)
	if req.Source != "" {
		f, err := os.Open(req.Source)
		if err != nil {
			return osErr(err)
		}
		defer f.Close()
		content = f
	}
	tmp, err := os.CreateTemp(filepath.Dir(req.Path), "."+filepath.Base(req.Path)+".ccm-*")
	if err != nil {
		return osErr(err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := tmp.Chmod(fs.FileMode(req.Mode)); err != nil {
		return osErr(err)
	}
	if content != nil {
		_, err = io.Copy(tmp, content)
	} else {
		_, err = tmp.Write(req.Content)
	}
	if err != nil {
		return osErr(err)
	}
	if err := tmp.Sync(); err != nil {
		return osErr(err)
	}
	if uid >= 0 || gid >= 0 {
		if err := tmp.Chown(uid, gid); err != nil {
			return osErr(err)
		}
	}
	if err := tmp.Close(); err != nil {
		return osErr(err)
	}
	return osErr(os.Rename(tmp.Name(), req.Path))
}

// Mkdir implements ccm_fs_mkdir.
func (h *Host) Mkdir(req abi.FSMkdirRequest) error {
	if stop, err := h.begin(abi.CallFSMkdir); stop {
		return err
	}
	if err := checkPath(req.Path); err != nil {
		return err
	}
	uid, gid, err := ids(req.Owner, req.Group)
	if err != nil {
		return err
	}
	if req.Parents {
		err = os.MkdirAll(req.Path, fs.FileMode(req.Mode))
	} else {
		err = os.Mkdir(req.Path, fs.FileMode(req.Mode))
	}
	if err != nil {
		return osErr(err)
	}
	if err := os.Chmod(req.Path, fs.FileMode(req.Mode)); err != nil {
		return osErr(err)
	}
	if uid >= 0 || gid >= 0 {
		return osErr(os.Lchown(req.Path, uid, gid))
	}
	return nil
}

// Remove implements ccm_fs_remove; it never follows a symlink.
func (h *Host) Remove(req abi.FSRemoveRequest) error {
	if stop, err := h.begin(abi.CallFSRemove); stop {
		return err
	}
	if err := checkPath(req.Path); err != nil {
		return err
	}
	if req.Recursive {
		return osErr(os.RemoveAll(req.Path))
	}
	return osErr(os.Remove(req.Path))
}

// Chown implements ccm_fs_chown with lchown semantics.
func (h *Host) Chown(req abi.FSChownRequest) error {
	if stop, err := h.begin(abi.CallFSChown); stop {
		return err
	}
	if err := checkPath(req.Path); err != nil {
		return err
	}
	uid, gid, err := ids(req.Owner, req.Group)
	if err != nil {
		return err
	}
	return osErr(os.Lchown(req.Path, uid, gid))
}

// Chmod implements ccm_fs_chmod.
func (h *Host) Chmod(req abi.FSChmodRequest) error {
	if stop, err := h.begin(abi.CallFSChmod); stop {
		return err
	}
	if err := checkPath(req.Path); err != nil {
		return err
	}
	return osErr(os.Chmod(req.Path, fs.FileMode(req.Mode)))
}

// List implements ccm_fs_list.
func (h *Host) List(req abi.FSListRequest) ([]abi.DirEntry, error) {
	if stop, err := h.begin(abi.CallFSList); stop {
		return nil, err
	}
	if err := checkPath(req.Path); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(req.Path)
	if err != nil {
		return nil, osErr(err)
	}
	out := make([]abi.DirEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, abi.DirEntry{Name: e.Name(), Type: fileType(e.Type())})
	}
	return out, nil
}

// LookupUser implements ccm_user_lookup.
func (h *Host) LookupUser(req abi.UserLookupRequest) (abi.UserLookupResponse, error) {
	if stop, err := h.begin(abi.CallUserLookup); stop {
		return abi.UserLookupResponse{}, err
	}
	var u *user.User
	var err error
	if req.ID != "" {
		u, err = user.LookupId(req.ID)
	} else {
		u, err = user.Lookup(req.Name)
	}
	if err != nil {
		return abi.UserLookupResponse{}, callErr(abi.CodeNotFound, "user %s%s: %v", req.Name, req.ID, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return abi.UserLookupResponse{Name: u.Username, UID: uid, GID: gid, Home: u.HomeDir}, nil
}

// LookupGroup implements ccm_group_lookup.
func (h *Host) LookupGroup(req abi.GroupLookupRequest) (abi.GroupLookupResponse, error) {
	if stop, err := h.begin(abi.CallGroupLookup); stop {
		return abi.GroupLookupResponse{}, err
	}
	var g *user.Group
	var err error
	if req.ID != "" {
		g, err = user.LookupGroupId(req.ID)
	} else {
		g, err = user.LookupGroup(req.Name)
	}
	if err != nil {
		return abi.GroupLookupResponse{}, callErr(abi.CodeNotFound, "group %s%s: %v", req.Name, req.ID, err)
	}
	gid, _ := strconv.Atoi(g.Gid)
	return abi.GroupLookupResponse{Name: g.Name, GID: gid}, nil
}

func checkPath(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return callErr(abi.CodeInvalid, "path %q must be absolute and clean", p)
	}
	return nil
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

func groupName(gid int) string {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return strconv.Itoa(gid)
}

// ids resolves owner and group (names or digits; "" = -1, unchanged).
func ids(owner, group string) (uid, gid int, err error) {
	uid, gid = -1, -1
	if owner != "" {
		if uid, err = strconv.Atoi(owner); err != nil {
			u, lerr := user.Lookup(owner)
			if lerr != nil {
				return 0, 0, callErr(abi.CodeNotFound, "user %q: %v", owner, lerr)
			}
			uid, _ = strconv.Atoi(u.Uid)
		}
	}
	if group != "" {
		if gid, err = strconv.Atoi(group); err != nil {
			g, lerr := user.LookupGroup(group)
			if lerr != nil {
				return 0, 0, callErr(abi.CodeNotFound, "group %q: %v", group, lerr)
			}
			gid, _ = strconv.Atoi(g.Gid)
		}
	}
	return uid, gid, nil
}

// osErr maps an OS error to the host's error codes.
func osErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return callErr(abi.CodeNotFound, "%v", err)
	case errors.Is(err, fs.ErrExist):
		return callErr(abi.CodeExists, "%v", err)
	}
	return callErr(abi.CodeIO, "%v", err)
}
