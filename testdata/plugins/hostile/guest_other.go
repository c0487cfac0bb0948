//go:build !wasip1

package main

import "github.com/ccm-dev/ccm/sdk/abi"

// Native stubs, so the package builds for go vet and staticcheck; the
// plugin only ever runs as wasip1.

func hostCall(string, any) (abi.Response, error) { return abi.Response{}, errNoAnswer }
func trap()                                      {}
func exit(int32)                                 {}
func setRawOutput([]byte)                        {}
func outputSet(uint64, uint64)                   {}
func kernelAlloc(uint64) uint64                  { return 0 }
func kernelLoadU8(uint64) uint32                 { return 0 }
func writeBlock([]byte) uint64                   { return 0 }
func readBlock(uint64) []byte                    { return nil }
func rawFSRead(uint64) uint64                    { return 0 }
func rawLog(uint64) uint64                       { return 0 }
func preopens() int                              { return 0 }
func sockAccept(int32) int32                     { return 8 }

var _ = []any{describe, validate, status, apply}
