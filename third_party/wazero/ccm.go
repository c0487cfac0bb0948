package wazero

import "github.com/tetratelabs/wazero/internal/version"

// CCMVersion is this wazero's version as its compilation cache records it:
// the release's, then the ccm patch level (ccm patch, third_party/README.md).
func CCMVersion() string { return version.GetWazeroVersion() }
