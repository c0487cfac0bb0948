//go:build !wasip1

package main

import "github.com/ccm-dev/ccm/sdk/abi"

func fsHostCall(string, any) (abi.Response, error) { return abi.Response{}, errNoAnswer }
