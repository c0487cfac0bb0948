package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Pack makes a bundle of dir: a gzip tarball of its regular files and
// directories, manifest.yaml at the root. The output depends only on names,
// contents and executable bits (sorted entries, zero times and owners), so
// packing the same tree twice gives the same sha256. Links, devices and
// other special files are refused, as Extract would refuse them.
func Pack(dir string) ([]byte, error) {
	if fi, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s has no %s; a bundle is the directory holding the manifest", dir, ManifestName)
	}
	type entry struct {
		rel string
		fi  fs.FileInfo
	}
	var ents []entry
	err := filepath.Walk(dir, func(p string, fi fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if !fi.Mode().IsRegular() && !fi.IsDir() {
			return fmt.Errorf("%s is not a regular file or directory; a bundle holds only those", p)
		}
		ents = append(ents, entry{filepath.ToSlash(rel), fi})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].rel < ents[j].rel })
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, e := range ents {
		h := &tar.Header{Name: e.rel, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if e.fi.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, e.rel+"/", 0o755
		} else {
			h.Typeflag, h.Size, h.Mode = tar.TypeReg, e.fi.Size(), 0o644
			if e.fi.Mode()&0o111 != 0 {
				h.Mode = 0o755
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.rel)))
			if err != nil {
				return nil, err
			}
			if int64(len(b)) != h.Size {
				return nil, fmt.Errorf("%s changed while packing", e.rel)
			}
			if _, err := tw.Write(b); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
