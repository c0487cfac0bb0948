//go:build wasip1

package sdk

import (
	"errors"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// The ccm_* exports. Each reads its input, lets serve do the work, and writes
// the output (Extism output, or stdout on the stdio transport), or sets the
// Extism error and returns 1.

//go:wasmexport ccm_describe
func exportDescribe() int32 { return run(abi.ExportDescribe) }

//go:wasmexport ccm_validate
func exportValidate() int32 { return run(abi.ExportValidate) }

//go:wasmexport ccm_validate_batch
func exportValidateBatch() int32 { return run(abi.ExportValidateBatch) }

//go:wasmexport ccm_status
func exportStatus() int32 { return run(abi.ExportStatus) }

//go:wasmexport ccm_apply
func exportApply() int32 { return run(abi.ExportApply) }

//go:wasmexport ccm_apply_batch
func exportApplyBatch() int32 { return run(abi.ExportApplyBatch) }

// run serves export. Its input comes through Extism, or, when that is empty,
// from stdin: then the host speaks the stdio transport (abi.ExportStdio),
// and the output and every host call of this export use it too.
func run(export string) int32 {
	var input []byte
	stdio := false
	if export != abi.ExportDescribe {
		input = readInput()
		if len(input) == 0 {
			in, err := readStdin()
			if err != nil {
				setError("read input from stdin: " + err.Error())
				return 1
			}
			input, stdio = in, len(in) > 0
		}
	}
	out, err := serve(export, registered(), wasmHost{stdio: stdio}, input)
	if err == nil && stdio {
		if err = writeStdout(out); err != nil {
			err = errors.New("write output to stdout: " + err.Error())
		}
	} else if err == nil {
		setOutput(out)
	}
	if err != nil {
		setError(err.Error())
		return 1
	}
	return 0
}
