//go:build !linux

package plugins

// Release is a no-op off Linux (see release_linux.go).
func (m modules) Release(string) {}
