package abi

// The stdio transport is an optional, faster way for a guest and the ccm host
// to move the same JSON documents: through the guest's WASI stdin and stdout,
// which the host serves from memory, instead of through the Extism kernel's
// memory, which a guest reads and writes 8 bytes per kernel call. A guest
// opts in by exporting ExportStdio; every other guest (any Extism PDK) keeps
// the Extism ABI above, unchanged. The Go SDK in sdk/ speaks both.
//
// With a guest that exports ExportStdio:
//
//   - Export input: the host writes the document to the guest's stdin and
//     gives Extism an empty input. A guest that finds an empty Extism input
//     reads its input from stdin (to EOF).
//   - Export output: a guest whose input came from stdin writes its output
//     document to stdout and sets no Extism output; the host takes what the
//     guest wrote to stdout during the call. Errors still go through the
//     Extism error.
//   - Host calls: in an export whose input came from stdin, the guest writes
//     the request document to stdout and calls the host function with
//     StdioCall|len(request) instead of a kernel offset. The host takes the
//     last len(request) bytes written to stdout, answers on stdin, and
//     returns StdioCall|len(response) (0: no answer); the guest reads that
//     many bytes from stdin.
//
// A guest on stdio must keep its own output off stdout (the Go SDK points
// os.Stdout at stderr).
const (
	// ExportStdio is exported, doing nothing, by a guest that speaks the
	// stdio transport.
	ExportStdio = "ccm_stdio_v1"
	// StdioCall marks a host-call argument or result that is a length on
	// the stdio transport, not a kernel offset (which is below 2^32).
	StdioCall uint64 = 1 << 63
)
