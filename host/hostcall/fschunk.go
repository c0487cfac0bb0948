package hostcall

import (
	"errors"
	"io"
	"os"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// readChunk answers a ccm_fs_read with Chunk set: at most limit bytes from
// req.Offset on, however large the file (an archive read piece by piece).
func readChunk(f *os.File, req abi.FSReadRequest, limit int64) (any, *abi.CallError) {
	if req.Offset < 0 {
		return nil, invalid("read %s: negative offset %d", req.Path, req.Offset)
	}
	buf := make([]byte, limit)
	n, err := f.ReadAt(buf, req.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, osError("read", req.Path, err)
	}
	return abi.FSReadResponse{Content: buf[:n]}, nil
}
