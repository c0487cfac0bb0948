//go:build !wasip1

package main

// extismLog exists natively only so the package builds for go vet.
func extismLog(string) {}
