package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

// The caps of one extraction; an archive past any of them is refused
// before anything is written.
const (
	maxEntries    = 100000
	maxTotalBytes = 1 << 30
	// defaultPart is the most of a file sent in one ccm_fs_write; a larger
	// file is written in parts (abi.FSWriteRequest.Part).
	defaultPart = 2 << 20
	// maxRatio is the most a tar.gz may expand (bytes out per byte in) once
	// it has produced ratioFrom bytes: a decompression bomb stops there.
	maxRatio         = 100
	defaultRatioFrom = 16 << 20
	chunk            = 1 << 20 // bytes per ccm_fs_read
)

// tuning holds the sizes tests lower to stay fast (archiveType.tune);
// zero fields take the defaults.
type tuning struct {
	part      int   // bytes per ccm_fs_write
	ratioFrom int64 // expansion checked past this many bytes
}

func (t tuning) withDefaults() tuning {
	if t.part <= 0 {
		t.part = defaultPart
	}
	if t.ratioFrom <= 0 {
		t.ratioFrom = defaultRatioFrom
	}
	return t
}

// entry is one member of the archive to create.
type entry struct {
	rel  string // cleaned relative name
	dir  bool
	mode uint32
	r    io.Reader // a file's content; walk drains what fn leaves
	// link is, for a tar hard link, the cleaned name of the earlier
	// regular file of this archive it shares content with: it is written
	// as a copy of that file.
	link string
}

// extract verifies the archive's checksum (when given) and then reads it
// twice: a first pass checks every entry and writes nothing, the second
// writes each through the host.
func extract(h sdk.Host, s spec) error {
	st, err := h.Stat(abi.FSStatRequest{Path: s.name, Checksum: s.checksum != ""})
	if err != nil {
		return fmt.Errorf("extract %s: %w", s.name, err)
	}
	if !st.Exists || st.Type != "file" {
		return fmt.Errorf("extract %s: the archive is not there", s.name)
	}
	if s.checksum != "" && st.SHA256 != s.checksum {
		return fmt.Errorf("extract %s: checksum mismatch, expected %q got %q; nothing was extracted", s.name, s.checksum, st.SHA256)
	}
	if err := walk(h, s, st.Size, func(e entry) error { return nil }); err != nil {
		return fmt.Errorf("extract %s: %w; nothing was extracted", s.name, err)
	}
	w := &writer{h: h, s: s, made: map[string]bool{}, modes: map[string]uint32{}}
	if err := w.mkdir(s.extractParent, 0o755, true); err != nil {
		return fmt.Errorf("extract %s: %w", s.name, err)
	}
	if err := walk(h, s, st.Size, w.write); err != nil {
		return fmt.Errorf("extract %s: %w", s.name, err)
	}
	return nil
}

// walk reads every entry of the archive, checks it, and passes it to fn.
func walk(h sdk.Host, s spec, size int64, fn func(entry) error) error {
	r := &fileReader{h: h, path: s.name, size: size}
	c := &caps{ratioFrom: s.tune.withDefaults().ratioFrom}
	switch s.format {
	case "zip":
		return walkZip(r, size, c, fn)
	case "tar.gz":
		gz, err := gzip.NewReader(io.NewSectionReader(r, 0, size))
		if err != nil {
			return fmt.Errorf("not a gzip file: %w", err)
		}
		c.in, c.out = r, gz
		return walkTar(&countingReader{r: gz, c: c}, c, fn)
	default:
		return walkTar(&countingReader{r: io.NewSectionReader(r, 0, size), c: c}, c, fn)
	}
}

// caps counts entries and bytes against the limits.
type caps struct {
	entries   int
	total     int64
	in        *fileReader // compressed input read so far (tar.gz)
	out       io.Reader
	zipped    int64 // compressed size of the zip members met so far
	ratioFrom int64
}

func (c *caps) add(name string, n int64) error {
	c.total += n
	if c.total > maxTotalBytes {
		return fmt.Errorf("refused: the archive expands to more than %d bytes (at %s)", maxTotalBytes, name)
	}
	in := c.zipped
	if c.in != nil {
		in = c.in.read
	}
	if (c.in != nil || c.zipped > 0) && c.total > c.ratioFrom && c.total > maxRatio*max(in, 1) {
		return fmt.Errorf("refused: a decompression bomb: %d bytes from %d compressed (more than %d:1) at %s", c.total, in, maxRatio, name)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	c *caps
}

func (cr *countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	if aerr := cr.c.add("the tar stream", int64(n)); aerr != nil {
		return n, aerr
	}
	return n, err
}

// clean checks an entry name: relative, no "..", not empty.
func clean(name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("refused: entry %q has an absolute name", name)
	}
	for _, part := range strings.Split(strings.ReplaceAll(name, "\\", "/"), "/") {
		if part == ".." {
			return "", fmt.Errorf("refused: entry %q climbs out of the extract directory (..)", name)
		}
	}
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("refused: entry %q holds a NUL byte", name)
	}
	rel := path.Clean(name)
	if rel == "." || rel == "" {
		return "", nil // the extract directory itself
	}
	return rel, nil
}

func walkTar(r io.Reader, c *caps, fn func(entry) error) error {
	tr := tar.NewReader(r)
	regular := map[string]bool{} // regular files so far, for hard links
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the tar: %w", err)
		}
		if c.entries++; c.entries > maxEntries {
			return fmt.Errorf("refused: more than %d entries", maxEntries)
		}
		rel, err := clean(hdr.Name)
		if err != nil {
			return err
		}
		e := entry{rel: rel, mode: uint32(hdr.Mode) & 0o777}
		switch hdr.Typeflag {
		case tar.TypeDir:
			e.dir = true
		case tar.TypeReg:
			e.r = tr // counted by the stream's countingReader
			regular[rel] = true
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeSymlink:
			return fmt.Errorf("refused: entry %q is a symlink (to %q); archive extracts only files and directories", hdr.Name, hdr.Linkname)
		case tar.TypeLink:
			target, err := clean(hdr.Linkname)
			if err != nil || !regular[target] {
				return fmt.Errorf("refused: entry %q is a hard link to %q, which is not an earlier file of the archive", hdr.Name, hdr.Linkname)
			}
			e.link = target
		default:
			return fmt.Errorf("refused: entry %q is a device, FIFO or other special file (type %q)", hdr.Name, hdr.Typeflag)
		}
		if err := visit(rel, e, fn); err != nil {
			return err
		}
	}
}

// visit passes a checked entry to fn, then drains what fn did not read,
// so every byte is counted against the caps in both passes.
func visit(rel string, e entry, fn func(entry) error) error {
	if rel == "" {
		return nil // the extract directory itself
	}
	if err := fn(e); err != nil {
		return err
	}
	if e.r != nil {
		if _, err := io.Copy(io.Discard, e.r); err != nil {
			return fmt.Errorf("reading %q: %w", e.rel, err)
		}
	}
	return nil
}

func walkZip(r io.ReaderAt, size int64, c *caps, fn func(entry) error) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return fmt.Errorf("not a zip file: %w", err)
	}
	if len(zr.File) > maxEntries {
		return fmt.Errorf("refused: more than %d entries", maxEntries)
	}
	for _, f := range zr.File {
		rel, err := clean(f.Name)
		if err != nil {
			return err
		}
		mode := f.Mode()
		e := entry{rel: rel, mode: uint32(mode.Perm())}
		switch {
		case mode.IsDir():
			e.dir = true
		case mode.IsRegular():
			if f.UncompressedSize64 > maxTotalBytes {
				return fmt.Errorf("refused: entry %q of %d bytes is larger than the %d an archive may expand to", f.Name, f.UncompressedSize64, maxTotalBytes)
			}
			c.zipped += int64(min(f.CompressedSize64, maxTotalBytes))
			rc, err := f.Open()
			if err != nil {
				return fmt.Errorf("reading %q: %w", f.Name, err)
			}
			e.r = &zipEntry{r: rc, c: c, name: f.Name, compressed: f.CompressedSize64}
			err = visit(rel, e, fn)
			rc.Close()
			if err != nil {
				return err
			}
			continue
		case mode&fs.ModeSymlink != 0:
			return fmt.Errorf("refused: entry %q is a symlink; archive extracts only files and directories", f.Name)
		default:
			return fmt.Errorf("refused: entry %q is a device, FIFO or other special file", f.Name)
		}
		if err := visit(rel, e, fn); err != nil {
			return err
		}
	}
	return nil
}

// zipEntry reads one zip member, counting it against the caps: the
// archive's total, and a member expanding more than maxRatio:1 past
// ratioFrom (a decompression bomb).
type zipEntry struct {
	r          io.Reader
	c          *caps
	name       string
	compressed uint64
	n          uint64
}

func (z *zipEntry) Read(p []byte) (int, error) {
	n, err := z.r.Read(p)
	z.n += uint64(n)
	if aerr := z.c.add(z.name, int64(n)); aerr != nil {
		return n, aerr
	}
	if z.n > uint64(z.c.ratioFrom) && z.n > maxRatio*max(z.compressed, 1) {
		return n, fmt.Errorf("refused: a decompression bomb: entry %q expands more than %d:1", z.name, maxRatio)
	}
	return n, err
}

// writer creates entries under extract_parent through the host.
type writer struct {
	h     sdk.Host
	s     spec
	made  map[string]bool   // directories created or chmod-ed so far
	modes map[string]uint32 // files written so far: their modes, for hard links
}

func (w *writer) write(e entry) error {
	p := path.Join(w.s.extractParent, e.rel)
	if e.dir {
		mode := e.mode
		if mode == 0 {
			mode = 0o755
		}
		return w.mkdir(p, mode, true)
	}
	if err := w.parents(path.Dir(p)); err != nil {
		return err
	}
	if e.link != "" {
		// The host copies the file this archive wrote already (fs_read
		// and fs_write both apply).
		src := path.Join(w.s.extractParent, e.link)
		if err := w.h.WriteFile(abi.FSWriteRequest{Path: p, Source: src, Mode: w.modes[e.link], Owner: w.s.owner, Group: w.s.group}); err != nil {
			return fmt.Errorf("write %s (a hard link to %s): %w", p, src, err)
		}
		return nil
	}
	mode := e.mode
	if mode == 0 {
		mode = 0o644
	}
	w.modes[e.rel] = mode
	// Up to part bytes go in one write; a larger file goes in parts.
	buf := make([]byte, w.s.tune.withDefaults().part)
	step := "first"
	for {
		n, err := io.ReadFull(e.r, buf)
		last := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !last {
			return fmt.Errorf("reading %q: %w", e.rel, err)
		}
		req := abi.FSWriteRequest{Path: p, Content: buf[:n], Mode: mode, Owner: w.s.owner, Group: w.s.group}
		switch {
		case last && step == "first":
		case last:
			req.Part = "last"
		default:
			req.Part = step
		}
		if err := w.h.WriteFile(req); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if last {
			return nil
		}
		step = "next"
	}
}

// parents makes the directories between extract_parent and dir that no
// directory entry made.
func (w *writer) parents(dir string) error {
	if w.made[dir] || dir == w.s.extractParent {
		return nil
	}
	if err := w.parents(path.Dir(dir)); err != nil {
		return err
	}
	return w.mkdir(dir, 0o755, false)
}

func (w *writer) mkdir(p string, mode uint32, explicit bool) error {
	if w.made[p] && !explicit {
		return nil
	}
	if err := w.h.Mkdir(abi.FSMkdirRequest{Path: p, Mode: mode, Owner: w.s.owner, Group: w.s.group, Parents: true}); err != nil {
		return fmt.Errorf("mkdir %s: %w", p, err)
	}
	w.made[p] = true
	return nil
}

// fileReader reads the archive through ccm_fs_read, a chunk at a time
// (kept, so small reads cost no host call); read counts the bytes fetched
// (the compressed input of a tar.gz).
type fileReader struct {
	h    sdk.Host
	path string
	size int64
	read int64
	buf  []byte
	at   int64 // offset of buf
}

func (f *fileReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		o := off + int64(n)
		if o >= f.size {
			return n, io.EOF
		}
		if o < f.at || o >= f.at+int64(len(f.buf)) {
			b, err := f.h.ReadFile(abi.FSReadRequest{Path: f.path, Chunk: true, Offset: o, MaxBytes: chunk})
			if err != nil {
				return n, fmt.Errorf("read %s: %w", f.path, err)
			}
			if len(b) == 0 {
				return n, io.EOF
			}
			f.buf, f.at = b, o
			f.read += int64(len(b))
		}
		n += copy(p[n:], f.buf[o-f.at:])
	}
	return n, nil
}
