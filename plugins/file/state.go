package main

import (
	"time"

	"github.com/ccm-dev/ccm/sdk/abi"
)

// observed maps a stat to the ensure value it shows. A symlink or special
// file counts as present: something other than a directory is there.
func observed(st abi.FSStatResponse) string {
	switch {
	case !st.Exists:
		return ensureAbsent
	case st.Type == "directory":
		return ensureDirectory
	}
	return ensurePresent
}

// stateDoc is the io.choria.ccm.v1.resource.file.state document.
func stateDoc(name string, st abi.FSStatResponse) map[string]any {
	meta := map[string]any{"name": name, "provider": providerPosix}
	if st.Exists {
		meta["checksum"] = st.SHA256
		meta["owner"] = st.Owner
		meta["group"] = st.Group
		meta["mode"] = formatMode(st.Mode)
		meta["mtime"] = time.Unix(st.MTime, 0).UTC().Format(time.RFC3339)
		meta["size"] = st.Size
		if st.Type == "symlink" {
			meta["link_target"] = st.LinkTarget
		}
	}
	return map[string]any{
		"protocol": stateProtocol,
		"ensure":   observed(st),
		"metadata": meta,
	}
}
