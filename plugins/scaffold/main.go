package main

import "github.com/ccm-dev/ccm/sdk"

// main is empty: a c-shared wasip1 module is driven through its exports.
func main() {}

func init() { sdk.Register(&scaffoldType{}) }
