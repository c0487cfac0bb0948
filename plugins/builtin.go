package plugins

import (
	"embed"
	"io/fs"
)

//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/file.wasm ./file
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/exec.wasm ./exec
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/service.wasm ./service
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/package.wasm ./package
//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o wasm/archive.wasm ./archive

// FS holds the built-in plugin modules as wasm/<type>.wasm (file.wasm,
// exec.wasm, service.wasm, package.wasm, archive.wasm).
//
//go:embed wasm/*.wasm
var FS embed.FS

// Modules returns the built-in modules with <type>.wasm at the root, the
// layout the host's WithFS reads:
//
//	host.New(host.WithFS(plugins.Modules()))
func Modules() fs.FS {
	sub, err := fs.Sub(FS, "wasm")
	if err != nil {
		panic("BUG: embedded plugins: " + err.Error()) // "wasm" is a valid, constant name
	}
	return sub
}
