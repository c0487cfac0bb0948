package plugins

import (
	_ "embed" // the modules, each as a []byte the host reads in place
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/file.wasm ./file
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/exec.wasm ./exec
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/service.wasm ./service
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/package.wasm ./package
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/archive.wasm ./archive
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/scaffold.wasm ./scaffold
//go:generate go run ../internal/wasmdata -sums wasm/SHA256SUMS wasm/file.wasm wasm/exec.wasm wasm/service.wasm wasm/package.wasm wasm/archive.wasm wasm/scaffold.wasm

var (
	//go:embed wasm/file.wasm
	fileWasm []byte
	//go:embed wasm/exec.wasm
	execWasm []byte
	//go:embed wasm/service.wasm
	serviceWasm []byte
	//go:embed wasm/package.wasm
	packageWasm []byte
	//go:embed wasm/archive.wasm
	archiveWasm []byte
	//go:embed wasm/scaffold.wasm
	scaffoldWasm []byte

	// The modules' sha256 sums, written with them (internal/wasmdata);
	// TestSums checks them.
	//go:embed wasm/SHA256SUMS
	sha256Sums string
)

// Modules returns the built-in modules with <type>.wasm at the root, the
// layout the host's WithFS reads:
//
//	host.New(host.WithFS(plugins.Modules()))
//
// Reading it through fs.ReadFile gives a copy, as fs.FS promises; the host
// instead borrows the embedded bytes with Lend: a 3.5 MB copy per type was
// 5 % of a 1-resource run's CPU.
func Modules() fs.FS {
	return modules{
		"archive.wasm":  archiveWasm,
		"exec.wasm":     execWasm,
		"file.wasm":     fileWasm,
		"package.wasm":  packageWasm,
		"scaffold.wasm": scaffoldWasm,
		"service.wasm":  serviceWasm,
	}
}

// modules is a flat, read-only fs.FS of named byte slices.
type modules map[string][]byte

// Lend returns the module name itself, not a copy; the caller must not
// modify it.
func (m modules) Lend(name string) ([]byte, error) {
	if b, ok := m[name]; ok && fs.ValidPath(name) {
		return b, nil
	}
	return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
}

// Sum returns the sha256 of module name in lowercase hex, as recorded when
// the modules were built: the host uses it instead of hashing the module in
// every run (a 3.5 MB module: ~2 ms, a tenth of a one-resource run).
func (m modules) Sum(name string) (string, bool) {
	if _, ok := m[name]; !ok {
		return "", false
	}
	sum, ok := recordedSums()[name]
	return sum, ok
}

// recordedSums parses sha256Sums: "HEX  NAME" per line.
var recordedSums = sync.OnceValue(func() map[string]string {
	sums := map[string]string{}
	for line := range strings.Lines(sha256Sums) {
		if sum, name, ok := strings.Cut(strings.TrimSpace(line), "  "); ok {
			sums[name] = sum
		}
	}
	return sums
})

func (m modules) Open(name string) (fs.File, error) {
	if name == "." {
		return &moduleDir{m: m}, nil
	}
	b, ok := m[name]
	if !ok || !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &moduleFile{info: moduleInfo{name: name, size: int64(len(b))}, b: b}, nil
}

func (m modules) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]fs.DirEntry, len(names))
	for i, n := range names {
		out[i] = fs.FileInfoToDirEntry(moduleInfo{name: n, size: int64(len(m[n]))})
	}
	return out, nil
}

var _ fs.ReadDirFS = modules(nil)

type moduleInfo struct {
	name string
	size int64
	dir  bool
}

func (i moduleInfo) Name() string       { return i.name }
func (i moduleInfo) Size() int64        { return i.size }
func (i moduleInfo) ModTime() time.Time { return time.Time{} }
func (i moduleInfo) IsDir() bool        { return i.dir }
func (i moduleInfo) Sys() any           { return nil }
func (i moduleInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

type moduleFile struct {
	info moduleInfo
	b    []byte
	off  int
}

func (f *moduleFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *moduleFile) Close() error               { return nil }
func (f *moduleFile) Read(p []byte) (int, error) {
	if f.off >= len(f.b) {
		return 0, io.EOF
	}
	n := copy(p, f.b[f.off:])
	f.off += n
	return n, nil
}

type moduleDir struct {
	m       modules
	entries []fs.DirEntry // nil until the first ReadDir
	off     int
}

func (d *moduleDir) Stat() (fs.FileInfo, error) { return moduleInfo{name: ".", dir: true}, nil }
func (d *moduleDir) Close() error               { return nil }
func (d *moduleDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: fs.ErrInvalid}
}

func (d *moduleDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.entries == nil {
		d.entries, _ = d.m.ReadDir(".")
	}
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.off += len(rest)
	return rest, nil
}
