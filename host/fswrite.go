package host

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// fsWrite writes atomically: a temp file beside the target (mode 0600 while
// it fills), write, fsync, chown, chmod (after chown, which may clear setuid
// bits), rename over the target, fsync the directory (when the plugin call
// ends: see dirSyncs). On failure the temp file is removed and the target is
// untouched. A symlink at the target is replaced by the rename, never
// followed.
func fsWrite(_ context.Context, st *callState, req abi.FSWriteRequest) (any, *abi.CallError) {
	if cerr := checkMode(req.Mode); cerr != nil {
		return nil, cerr
	}
	rp, cerr := resolveParent(req.Path)
	if cerr != nil {
		return nil, cerr
	}
	if cerr := allowed(st, access{call: abi.CallFSWrite, path: req.Path, target: rp}); cerr != nil {
		return nil, cerr
	}
	var src io.Reader // stays a nil interface without a source
	if req.Source != "" {
		// Copying a source reveals its content: it needs fs_read on it.
		full, cerr := resolveReadable(st, abi.CallFSRead, req.Source)
		if cerr != nil {
			return nil, cerr
		}
		f, _, err := openRegular(full)
		if err != nil {
			return nil, osError("open source", req.Source, err)
		}
		defer f.Close()
		src = f
	}
	uid, cerr := st.names.uidOf(req.Owner)
	if cerr != nil {
		return nil, cerr
	}
	gid, cerr := st.names.gidOf(req.Group)
	if cerr != nil {
		return nil, cerr
	}
	root, base, cerr := openParent(rp)
	if cerr != nil {
		return nil, cerr
	}
	defer root.Close()
	if fi, err := root.Lstat(base); err == nil && fi.IsDir() {
		return nil, &abi.CallError{Code: abi.CodeExists, Message: req.Path + " exists as a directory"}
	}
	tmp := "." + base + ".ccm-" + rand.Text()[:12]
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, osError("create temp file for", req.Path, err)
	}
	err = fillTemp(f, src, req.Content, uid, gid, fileMode(req.Mode))
	if err == nil {
		err = root.Rename(tmp, base)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return nil, osError("write", req.Path, err)
	}
	st.dirs.add(filepath.Dir(rp), root) // durability of the rename, at the end of the call
	return abi.Empty{}, nil
}

func fillTemp(f *os.File, src io.Reader, content []byte, uid, gid int, mode fs.FileMode) error {
	var err error
	if src != nil {
		_, err = io.Copy(f, src)
	} else {
		_, err = f.Write(content)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil && (uid != -1 || gid != -1) {
		err = f.Chown(uid, gid)
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fsMkdir creates the directory (and, with Parents, each missing parent,
// each checked against the grant), then chowns and chmods it exactly, so
// the umask does not matter. An existing directory only gets the chown and
// chmod.
func fsMkdir(_ context.Context, st *callState, req abi.FSMkdirRequest) (any, *abi.CallError) {
	if cerr := checkMode(req.Mode); cerr != nil {
		return nil, cerr
	}
	rp, cerr := resolveParent(req.Path)
	if cerr != nil {
		return nil, cerr
	}
	if cerr := allowed(st, access{call: abi.CallFSMkdir, path: req.Path, target: rp}); cerr != nil {
		return nil, cerr
	}
	uid, cerr := st.names.uidOf(req.Owner)
	if cerr != nil {
		return nil, cerr
	}
	gid, cerr := st.names.gidOf(req.Group)
	if cerr != nil {
		return nil, cerr
	}
	if cerr := mkParents(st, req, rp); cerr != nil {
		return nil, cerr
	}
	root, base, cerr := openParent(rp)
	if cerr != nil {
		return nil, cerr
	}
	defer root.Close()
	if err := root.Mkdir(base, fileMode(req.Mode)&fs.ModePerm); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, osError("mkdir", req.Path, err)
	}
	fi, err := root.Lstat(base)
	if err != nil {
		return nil, osError("mkdir", req.Path, err)
	}
	if !fi.IsDir() {
		return nil, &abi.CallError{Code: abi.CodeExists, Message: req.Path + " exists as a " + typeOf(fi.Mode())}
	}
	if uid != -1 || gid != -1 {
		if err := root.Lchown(base, uid, gid); err != nil {
			return nil, osError("chown", req.Path, err)
		}
	}
	if err := root.Chmod(base, fileMode(req.Mode)); err != nil {
		return nil, osError("chmod", req.Path, err)
	}
	return abi.Empty{}, nil
}

// mkParents creates the missing parents of rp, outermost first, each one
// checked against fs_write: a grant of /a/b/c does not let mkdir create /a/b.
func mkParents(st *callState, req abi.FSMkdirRequest, rp string) *abi.CallError {
	var missing []string
	for d := filepath.Dir(rp); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !notExist(err) {
			return osError("stat", d, err)
		}
		missing = append(missing, d)
		if d == "/" {
			break
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !req.Parents {
		return &abi.CallError{Code: abi.CodeNotFound, Message: "parent directory " + missing[0] + " of " + req.Path + " does not exist; set parents to create it"}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if cerr := allowed(st, access{call: abi.CallFSMkdir, path: d, target: d}); cerr != nil {
			return cerr
		}
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return osError("mkdir", d, err)
		}
	}
	return nil
}

// fsRemove unlinks a file or symlink (never its target) or removes a
// directory; a non-empty one only with Recursive, which does not follow
// symlinks either.
func fsRemove(_ context.Context, st *callState, req abi.FSRemoveRequest) (any, *abi.CallError) {
	root, base, cerr := openChecked(st, abi.CallFSRemove, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer root.Close()
	fi, err := root.Lstat(base)
	if err != nil {
		return nil, osError("remove", req.Path, err)
	}
	if fi.IsDir() && req.Recursive {
		err = root.RemoveAll(base)
	} else {
		err = root.Remove(base)
	}
	if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return nil, &abi.CallError{Code: abi.CodeExists, Message: "directory " + req.Path + " is not empty; set recursive to remove it with its contents"}
	}
	if err != nil {
		return nil, osError("remove", req.Path, err)
	}
	return abi.Empty{}, nil
}

// fsChown changes ownership with lchown semantics: a symlink itself, never
// its target.
func fsChown(_ context.Context, st *callState, req abi.FSChownRequest) (any, *abi.CallError) {
	root, base, cerr := openChecked(st, abi.CallFSChown, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer root.Close()
	uid, cerr := st.names.uidOf(req.Owner)
	if cerr != nil {
		return nil, cerr
	}
	gid, cerr := st.names.gidOf(req.Group)
	if cerr != nil {
		return nil, cerr
	}
	if err := root.Lchown(base, uid, gid); err != nil {
		return nil, osError("chown", req.Path, err)
	}
	return abi.Empty{}, nil
}

// fsChmod changes permission bits. Linux cannot chmod a symlink itself and
// chmod would follow it, so a symlink is refused.
func fsChmod(_ context.Context, st *callState, req abi.FSChmodRequest) (any, *abi.CallError) {
	if cerr := checkMode(req.Mode); cerr != nil {
		return nil, cerr
	}
	root, base, cerr := openChecked(st, abi.CallFSChmod, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	defer root.Close()
	fi, err := root.Lstat(base)
	if err != nil {
		return nil, osError("chmod", req.Path, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, invalid("chmod %s: it is a symlink, and chmod would change its target", req.Path)
	}
	if err := root.Chmod(base, fileMode(req.Mode)); err != nil {
		return nil, osError("chmod", req.Path, err)
	}
	return abi.Empty{}, nil
}

// openChecked resolves path's parent directories, passes the one check for
// call, and opens the resolved parent as an os.Root, so the operation on
// base never follows a symlink out of it. The caller closes root.
func openChecked(st *callState, call, path string) (root *os.Root, base string, cerr *abi.CallError) {
	rp, cerr := resolveParent(path)
	if cerr != nil {
		return nil, "", cerr
	}
	if cerr := allowed(st, access{call: call, path: path, target: rp}); cerr != nil {
		return nil, "", cerr
	}
	return openParent(rp)
}
