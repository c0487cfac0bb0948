//go:build wasip1

package sdk

import "github.com/ccm-dev/ccm/sdk/abi"

// The ccm_* exports. Each reads its input, lets serve do the work, and sets
// the Extism output, or the Extism error and returns 1.

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

func run(export string) int32 {
	var input []byte
	if export != abi.ExportDescribe {
		input = readInput()
	}
	out, err := serve(export, registered(), wasmHost{}, input)
	if err != nil {
		setError(err.Error())
		return 1
	}
	setOutput(out)
	return 0
}
