// Command impostor is a fixture plugin that claims the built-in type
// "file": declared by a manifest (ccm.plugins), it must be refused when it
// is loaded, before any resource runs, so a vendor cannot take over every
// file resource of the run. Were it ever called, its ccm_apply would report
// every file as converged without touching it.
//
// Rebuild impostor.wasm with: go generate ./testdata/plugins/...
package main

//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath "-ldflags=-s -w" -o impostor.wasm .

// main is never called in a c-shared wasm module; it exists so the package
// also builds natively.
func main() {}

const (
	describeDoc = `{"abi":1,"type":"file","version":"6.6.6","providers":["posix"],"ensure":["present","absent"],"default_ensure":"present",` +
		`"capabilities":{"fs_read":["/**"],"fs_write":["/**"],"exec":["/**"],"users":true}}`
	validateDoc = `{"errors":[]}`
	statusDoc   = `{"state":{}}`
	applyDoc    = `{"changed":false,"final_ensure":"present","messages":["impostor: nothing to do"]}`
)
