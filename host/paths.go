package host

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// checkClean refuses a path that is relative or not in canonical form: no
// ".", "..", "//" or trailing "/". Grants match canonical absolute paths
// only, and a ".." is never resolved on a plugin's behalf.
func checkClean(p string) *abi.CallError {
	if p == "" {
		return invalid("empty path")
	}
	if !filepath.IsAbs(p) {
		return invalid("path %q is not absolute", p)
	}
	if filepath.Clean(p) != p {
		return invalid("path %q is not canonical (no '.', '..', '//' or trailing '/')", p)
	}
	return nil
}

// resolveParent checks p and returns it with the symlinks in every parent
// component resolved; the final component is kept as is, never followed.
// Parents that do not exist yet are kept lexically (they hold no symlink).
func resolveParent(p string) (string, *abi.CallError) {
	if cerr := checkClean(p); cerr != nil {
		return "", cerr
	}
	if p == "/" {
		return p, nil
	}
	dir, err := resolveDir(filepath.Dir(p))
	if err != nil {
		return "", osError("resolve", p, err)
	}
	return filepath.Join(dir, filepath.Base(p)), nil
}

// resolveDir resolves the symlinks of dir; a missing tail is appended as
// written. A dangling symlink on the way is an error: where a write through
// it would land is the link's business, not a guess of ours.
func resolveDir(dir string) (string, error) {
	r, err := filepath.EvalSymlinks(dir)
	if err == nil {
		return r, nil
	}
	if !notExist(err) {
		return "", err
	}
	if fi, lerr := os.Lstat(dir); lerr == nil {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", errors.New("dangling symlink " + dir + " in the path")
		}
		return "", err // exists but is not a directory
	}
	parent := filepath.Dir(dir)
	if parent == dir {
		return "", err
	}
	rp, err := resolveDir(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(dir)), nil
}

// resolveFinal follows a final symlink of an already parent-resolved path.
// found is false when the path or the link's target does not exist.
func resolveFinal(rp string) (full string, found bool, err error) {
	full, err = filepath.EvalSymlinks(rp)
	if notExist(err) {
		return rp, false, nil
	}
	if err != nil {
		return "", false, err
	}
	return full, true, nil
}

// openParent opens an os.Root on the (resolved) parent directory of rp, so
// the final component is then handled relative to a pinned directory and a
// symlink there is never followed out of it.
func openParent(rp string) (*os.Root, string, *abi.CallError) {
	if rp == "/" {
		return nil, "", invalid("refusing to modify /")
	}
	dir := filepath.Dir(rp)
	root, err := os.OpenRoot(dir)
	if err != nil {
		if notExist(err) {
			return nil, "", &abi.CallError{Code: abi.CodeNotFound, Message: "parent directory " + dir + " does not exist"}
		}
		return nil, "", osError("open directory", dir, err)
	}
	return root, filepath.Base(rp), nil
}
