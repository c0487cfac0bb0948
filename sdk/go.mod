// The Go SDK for ccm resource-type plugins. It requires nothing: a plugin
// built on it depends on the Go standard library only. See README.md.
module github.com/ccm-dev/ccm/sdk

go 1.24
