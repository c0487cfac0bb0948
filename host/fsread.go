package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// fsStat: a missing path is Exists=false, not an error. A followed symlink
// is checked against the grant twice: where the link is, and where it leads.
func fsStat(_ context.Context, st *callState, req abi.FSStatRequest) (any, *abi.CallError) {
	rp, cerr := resolveParent(req.Path)
	if cerr != nil {
		return nil, cerr
	}
	if cerr := allowed(st, access{call: abi.CallFSStat, path: req.Path, target: rp}); cerr != nil {
		return nil, cerr
	}
	fi, err := os.Lstat(rp)
	if notExist(err) {
		return abi.FSStatResponse{}, nil
	}
	if err != nil {
		return nil, osError("stat", req.Path, err)
	}
	var linkTarget string
	target := rp
	if fi.Mode()&fs.ModeSymlink != 0 {
		if linkTarget, err = os.Readlink(rp); err != nil {
			return nil, osError("readlink", req.Path, err)
		}
		if req.FollowSymlinks {
			full, found, err := resolveFinal(rp)
			if err != nil {
				return nil, osError("resolve", req.Path, err)
			}
			if !found {
				return abi.FSStatResponse{}, nil
			}
			if cerr := allowed(st, access{call: abi.CallFSStat, path: req.Path, target: full}); cerr != nil {
				return nil, cerr
			}
			if fi, err = os.Lstat(full); err != nil {
				return nil, osError("stat", req.Path, err)
			}
			target, linkTarget = full, ""
		}
	}
	resp := statOf(fi, st.names)
	resp.LinkTarget = linkTarget
	if req.Checksum && fi.Mode().IsRegular() {
		sum, err := sha256File(target)
		if err != nil {
			return nil, osError("checksum", req.Path, err)
		}
		resp.SHA256 = sum
	}
	return resp, nil
}

func statOf(fi fs.FileInfo, names *nameCache) abi.FSStatResponse {
	resp := abi.FSStatResponse{
		Exists: true,
		Type:   typeOf(fi.Mode()),
		Mode:   unixMode(fi.Mode()),
		Size:   fi.Size(),
		MTime:  fi.ModTime().Unix(),
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		resp.UID, resp.GID = int(sys.Uid), int(sys.Gid)
	}
	resp.Owner, resp.Group = names.owner(resp.UID), names.group(resp.GID)
	return resp
}

func typeOf(m fs.FileMode) string {
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

// openRegular opens a symlink-free path for reading, refusing anything but
// a regular file (a FIFO would block the host, a device is never content).
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, errors.New("not a regular file (" + typeOf(fi.Mode()) + ")")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	return f, fi, nil
}

func sha256File(path string) (string, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	// The struct hides File.WriteTo, which would allocate its own 32 KiB
	// buffer on every call.
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, *buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyBuffers are the buffers sha256File reads through: every ccm_fs_stat
// with a checksum hashes a file.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

// resolveReadable resolves path for reading its content: parents, then the
// final symlink, each resolution checked against fs_read for call.
func resolveReadable(st *callState, call, path string) (string, *abi.CallError) {
	rp, cerr := resolveParent(path)
	if cerr != nil {
		return "", cerr
	}
	if cerr := allowed(st, access{call: call, path: path, target: rp}); cerr != nil {
		return "", cerr
	}
	full, found, err := resolveFinal(rp)
	if err != nil {
		return "", osError("resolve", path, err)
	}
	if !found {
		return "", &abi.CallError{Code: abi.CodeNotFound, Message: path + " does not exist"}
	}
	if full != rp {
		if cerr := allowed(st, access{call: call, path: path, target: full}); cerr != nil {
			return "", cerr
		}
	}
	return full, nil
}

func fsRead(_ context.Context, st *callState, req abi.FSReadRequest) (any, *abi.CallError) {
	full, cerr := resolveReadable(st, abi.CallFSRead, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	limit := st.limits.RequestBytes
	if req.MaxBytes > 0 && req.MaxBytes < limit {
		limit = req.MaxBytes
	}
	f, _, err := openRegular(full)
	if err != nil {
		return nil, osError("read", req.Path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, osError("read", req.Path, err)
	}
	if int64(len(data)) > limit {
		return nil, &abi.CallError{Code: abi.CodeTooLarge, Message: "read " + req.Path + ": file is larger than the limit of " + strconv.FormatInt(limit, 10) + " bytes"}
	}
	return abi.FSReadResponse{Content: data}, nil
}

func fsList(_ context.Context, st *callState, req abi.FSListRequest) (any, *abi.CallError) {
	full, cerr := resolveReadable(st, abi.CallFSList, req.Path)
	if cerr != nil {
		return nil, cerr
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return nil, osError("list", req.Path, err)
	}
	out := abi.FSListResponse{Entries: make([]abi.DirEntry, 0, len(entries))}
	for _, e := range entries { // os.ReadDir sorts by name
		out.Entries = append(out.Entries, abi.DirEntry{Name: e.Name(), Type: typeOf(e.Type())})
	}
	return out, nil
}
