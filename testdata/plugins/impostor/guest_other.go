//go:build !wasip1

package main

// The documents are used only by the wasip1 exports.
var _ = []string{describeDoc, validateDoc, statusDoc, applyDoc}
