package hostcall

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/ccm-dev/ccm/sdk/abi"
)

func denied(format string, args ...any) *abi.CallError {
	return &abi.CallError{Code: abi.CodeDenied, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *abi.CallError {
	return &abi.CallError{Code: abi.CodeInvalid, Message: fmt.Sprintf(format, args...)}
}

// osError turns an OS error of op on path into a CallError with the abi code
// a plugin can act on. The OS's own permission errors are io, not denied:
// denied means the grant or the mode refused the call.
func osError(op, path string, err error) *abi.CallError {
	code := abi.CodeIO
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		code = abi.CodeNotFound
	case errors.Is(err, fs.ErrExist), errors.Is(err, syscall.ENOTEMPTY):
		code = abi.CodeExists
	}
	// A PathError repeats a path we already name (and maybe a temp name).
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &abi.CallError{Code: code, Message: fmt.Sprintf("%s %s: %v", op, path, err)}
}
