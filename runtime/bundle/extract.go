package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ccm-dev/ccm/internal/privatedir"
)

// ManifestName is the file a bundle must hold, at its root or in its single
// top-level directory (what `tar czf b.tgz dir` makes; CCM looks for it by
// base name).
const ManifestName = "manifest.yaml"

// Limits cap what one bundle may expand to.
type Limits struct {
	MaxArchive int64 // compressed bytes fetched
	MaxEntries int   // tar entries
	MaxTotal   int64 // uncompressed bytes of all files
	// MaxRatio caps uncompressed/compressed once more than RatioFloor
	// bytes were expanded (a gzip bomb); small bundles of text compress
	// well and are never refused for it.
	MaxRatio   int64
	RatioFloor int64
}

// DefaultLimits are generous for manifests, templates and plugins.
var DefaultLimits = Limits{
	MaxArchive: 64 << 20,
	MaxEntries: 10000,
	MaxTotal:   256 << 20,
	MaxRatio:   100,
	RatioFloor: 8 << 20,
}

// Digest is the hex sha256 of b.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Extracted is a bundle unpacked in the cache.
type Extracted struct {
	Root     string // the bundle's directory (holding the manifest)
	Manifest string // absolute path of manifest.yaml
	Digest   string // sha256 of the tarball
}

// Extract unpacks the tarball archive into cache/DIGEST (mode 0700; the
// cache is made 0700 when missing and refused when others may write to it)
// and returns where its manifest is. An existing cache/DIGEST is reused:
// it was written by an earlier Extract of the same bytes. The bundle is
// extracted into a fresh temporary sibling and renamed into place, so a
// live tree is never written over; files are left read-only.
func Extract(archive []byte, cache string, lim Limits) (*Extracted, error) {
	if int64(len(archive)) > lim.MaxArchive {
		return nil, fmt.Errorf("bundle is %d bytes, over the limit of %d", len(archive), lim.MaxArchive)
	}
	if err := privateDir(cache); err != nil {
		return nil, err
	}
	digest := Digest(archive)
	final := filepath.Join(cache, digest)
	if _, err := os.Stat(filepath.Join(final, ".complete")); err != nil {
		var rnd [8]byte
		_, _ = rand.Read(rnd[:])
		tmp := filepath.Join(cache, ".tmp-"+digest[:16]+"-"+hex.EncodeToString(rnd[:]))
		if err := os.Mkdir(tmp, 0o700); err != nil {
			return nil, fmt.Errorf("bundle cache: %w", err)
		}
		if err := unpack(archive, tmp, lim); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(digest+"\n"), 0o400); err != nil {
			_ = os.RemoveAll(tmp)
			return nil, fmt.Errorf("bundle cache: %w", err)
		}
		if err := os.Rename(tmp, final); err != nil {
			_ = os.RemoveAll(tmp)
			// Another run extracted the same bytes first: use its copy.
			if _, serr := os.Stat(filepath.Join(final, ".complete")); serr != nil {
				return nil, fmt.Errorf("bundle cache: %w", err)
			}
		}
	}
	root, err := findManifest(final)
	if err != nil {
		return nil, err
	}
	return &Extracted{Root: root, Manifest: filepath.Join(root, ManifestName), Digest: digest}, nil
}

// privateDir makes dir (mode 0700) or checks that an existing one is a
// directory, not a link, owned by this user or root and writable by its
// owner only (internal/privatedir): a bundle cache others can write to
// could be swapped under a run.
func privateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("bundle cache: %w", err)
	}
	if err := privatedir.Ensure(dir, 0o700); err != nil {
		return fmt.Errorf("bundle cache: %w; use a private directory (mode 0700)", err)
	}
	return nil
}

// findManifest returns the directory holding manifest.yaml: dir itself, or
// its single top-level directory.
func findManifest(dir string) (string, error) {
	if fi, err := os.Lstat(filepath.Join(dir, ManifestName)); err == nil && fi.Mode().IsRegular() {
		return dir, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var dirs []string
	for _, e := range ents {
		if e.Name() == ".complete" {
			continue
		}
		if !e.IsDir() {
			dirs = nil
			break
		}
		dirs = append(dirs, e.Name())
	}
	if len(dirs) == 1 {
		sub := filepath.Join(dir, dirs[0])
		if fi, err := os.Lstat(filepath.Join(sub, ManifestName)); err == nil && fi.Mode().IsRegular() {
			return sub, nil
		}
	}
	return "", fmt.Errorf("bundle holds no %s at its root (nor in a single top-level directory); pack the directory holding it with `ccm bundle pack DIR`", ManifestName)
}

// ErrUnsafe marks an entry extraction refuses.
var ErrUnsafe = errors.New("unsafe bundle entry")

// unpack writes the entries of archive under dir, after a first pass
// has checked every header (names, types, entry count, declared sizes and
// ratio) without writing anything: a tar entry's body is exactly its
// declared size, so a bomb or a huge entry count is refused from headers.
func unpack(archive []byte, dir string, lim Limits) error {
	if err := scan(archive, lim); err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return fmt.Errorf("bundle is not a gzip tarball: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var total int64
	entries := 0
	ratioOK := func() error {
		if total > lim.RatioFloor && total > lim.MaxRatio*int64(len(archive)) {
			return fmt.Errorf("bundle expands more than %d times its %d compressed bytes (a decompression bomb?); refused", lim.MaxRatio, len(archive))
		}
		return nil
	}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("bundle tarball: %w", err)
		}
		entries++
		if entries > lim.MaxEntries {
			return fmt.Errorf("bundle has more than %d entries; refused", lim.MaxEntries)
		}
		name, err := safeName(h.Name)
		if err != nil {
			return err
		}
		if name == "" { // "./"
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o700); err != nil {
				return fmt.Errorf("bundle entry %q: %w", h.Name, err)
			}
		case tar.TypeReg:
			if h.Size < 0 || total+h.Size > lim.MaxTotal {
				return fmt.Errorf("bundle expands to more than %d bytes; refused", lim.MaxTotal)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
				return fmt.Errorf("bundle entry %q: %w", h.Name, err)
			}
			mode := fs.FileMode(0o444)
			if h.Mode&0o111 != 0 {
				mode = 0o555
			}
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return fmt.Errorf("bundle entry %q: %w (duplicate entry?)", h.Name, err)
			}
			n, err := copyCapped(f, tr, h.Size, &total, ratioOK)
			cerr := f.Close()
			if err != nil {
				return fmt.Errorf("bundle entry %q: %w", h.Name, err)
			}
			if cerr != nil {
				return fmt.Errorf("bundle entry %q: %w", h.Name, cerr)
			}
			if n != h.Size {
				return fmt.Errorf("bundle entry %q: truncated", h.Name)
			}
		case tar.TypeXGlobalHeader:
			continue
		default:
			return fmt.Errorf("%w %q: %s; a bundle holds only regular files and directories", ErrUnsafe, h.Name, typeName(h.Typeflag))
		}
	}
}

// scan checks the headers of archive against lim.
func scan(archive []byte, lim Limits) error {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return fmt.Errorf("bundle is not a gzip tarball: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var total int64
	for entries := 1; ; entries++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("bundle tarball: %w", err)
		}
		if entries > lim.MaxEntries {
			return fmt.Errorf("bundle has more than %d entries; refused", lim.MaxEntries)
		}
		if _, err := safeName(h.Name); err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
		case tar.TypeReg:
			if h.Size < 0 || total+h.Size > lim.MaxTotal {
				return fmt.Errorf("bundle expands to more than %d bytes; refused", lim.MaxTotal)
			}
			total += h.Size
			if total > lim.RatioFloor && total > lim.MaxRatio*int64(len(archive)) {
				return fmt.Errorf("bundle expands more than %d times its %d compressed bytes (a decompression bomb?); refused", lim.MaxRatio, len(archive))
			}
		default:
			return fmt.Errorf("%w %q: %s; a bundle holds only regular files and directories", ErrUnsafe, h.Name, typeName(h.Typeflag))
		}
	}
}

func copyCapped(w io.Writer, r io.Reader, size int64, total *int64, check func() error) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for n < size {
		chunk := int64(len(buf))
		if size-n < chunk {
			chunk = size - n
		}
		m, err := io.ReadFull(r, buf[:chunk])
		n += int64(m)
		*total += int64(m)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				return n, werr
			}
		}
		if cerr := check(); cerr != nil {
			return n, cerr
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// safeName cleans a tar entry name, refusing absolute names and "..".
func safeName(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) || strings.Contains(name, `\`) {
		return "", fmt.Errorf("%w %q: invalid name", ErrUnsafe, name)
	}
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w %q: absolute name", ErrUnsafe, name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return "", fmt.Errorf("%w %q: name climbs out with a .. element", ErrUnsafe, name)
		}
	}
	c := path.Clean(name)
	if c == "." {
		return "", nil
	}
	if c == ".complete" {
		return "", fmt.Errorf("%w %q: reserved name", ErrUnsafe, name)
	}
	return c, nil
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "a symbolic link"
	case tar.TypeLink:
		return "a hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "a device file"
	case tar.TypeFifo:
		return "a FIFO"
	}
	return fmt.Sprintf("entry type %q", t)
}
