package sdk

import "sync"

// registry holds the one Resource a plugin module provides. It is filled once
// from the plugin's init and only read afterwards; the mutex makes a racy
// second Register fail loudly instead of silently.
var registry struct {
	mu sync.Mutex
	r  Resource
}

// Register makes r the resource type this plugin module provides. Call it
// once, from the plugin's init:
//
//	func init() { sdk.Register(myType{}) }
//
// and build the plugin's main package with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o TYPE.wasm
//
// # Notes
//
//   - It panics on a nil Resource or on a second call: both are programming
//     errors a plugin's first test run must reveal.
//   - Natively (unit tests) it only stores r; the ccm_* exports exist only in
//     the GOOS=wasip1 build.
func Register(r Resource) {
	if r == nil {
		panic("sdk: Register called with a nil Resource")
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.r != nil {
		panic("sdk: Register called twice; a plugin module provides exactly one resource type")
	}
	registry.r = r
}

// registered returns the Resource given to Register, or nil.
func registered() Resource {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.r
}
