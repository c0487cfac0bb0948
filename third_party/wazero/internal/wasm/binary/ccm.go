package binary

import (
	"bytes"
	"io"
)

// readView returns the next n bytes of r, which reads binary from its
// start, as a view of binary instead of a copy (ccm patch,
// third_party/README.md): a module's function bodies and data segments are
// most of its bytes, and a copy of each was most of decoding a module whose
// compiled code is cached. The bytes given to CompileModule must therefore
// not change while the compiled module is in use.
func readView(r *bytes.Reader, binary []byte, n uint64) ([]byte, error) {
	if uint64(r.Len()) < n {
		if r.Len() == 0 {
			return nil, io.EOF
		}
		return nil, io.ErrUnexpectedEOF
	}
	start := len(binary) - r.Len()
	end := start + int(n)
	if _, err := r.Seek(int64(n), io.SeekCurrent); err != nil {
		return nil, err
	}
	return binary[start:end:end], nil
}
