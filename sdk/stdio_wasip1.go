//go:build wasip1

package sdk

import (
	"errors"
	"os"
	"syscall"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// The guest's end of the stdio transport (see abi.ExportStdio): documents
// move through WASI stdin and stdout in one call each, instead of 8 bytes
// per Extism kernel call.

//go:wasmexport ccm_stdio_v1
func exportStdio() int32 { return 0 }

// The transport owns stdout: what a plugin prints goes to stderr, which the
// host keeps to explain a crash. The *os.File of fd 1 stays referenced:
// unreachable, its finalizer would close fd 1 at the next garbage
// collection, and every later write of the transport would fail with EBADF
// (a plugin allocating enough to collect, such as scaffold rendering a
// hundred files, failed with "write output to stdout: Bad file number").
var transportStdout = os.Stdout

func init() { os.Stdout = os.Stderr }

// readStdin reads the export's input from stdin, to EOF.
func readStdin() ([]byte, error) {
	buf := make([]byte, 0, 4<<10)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(0, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
	}
}

// readStdinN reads exactly n bytes from stdin, into buf when it has room.
func readStdinN(n uint64, buf []byte) ([]byte, error) {
	if uint64(cap(buf)) >= n {
		buf = buf[:n]
	} else {
		buf = make([]byte, n)
	}
	for off := 0; off < len(buf); {
		m, err := syscall.Read(0, buf[off:])
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return nil, errors.New("stdin ended early")
		}
		off += m
	}
	return buf, nil
}

// writeStdout writes all of data to stdout.
func writeStdout(data []byte) error {
	for len(data) > 0 {
		n, err := syscall.Write(1, data)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("stdout accepts no more")
		}
		data = data[n:]
	}
	return nil
}

// callStdio sends one host call on the stdio transport and returns the
// response document (nil: the host gave none), read into buf when it has
// room.
func callStdio(fn func(uint64) uint64, req, buf []byte) ([]byte, error) {
	if err := writeStdout(req); err != nil {
		return nil, err
	}
	r := fn(abi.StdioCall | uint64(len(req)))
	if r&abi.StdioCall == 0 {
		return nil, nil
	}
	return readStdinN(r&^abi.StdioCall, buf)
}
