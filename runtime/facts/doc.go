// Package facts gathers the system facts templates see as Facts, and lays
// CLI overrides (--facts FILE, --fact k=v) over them.
//
// For now only host.info is gathered (hostname, os, platform,
// platformFamily, platformVersion, kernelVersion, kernelArch), from
// os.Hostname, /etc/os-release and uname, with gopsutil's names and values
// so that switching to gopsutil later changes nothing for manifests.
// Gathering never fails: a missing source gives empty strings.
//
// It may import runtime/data (merging, file decoding). It must not import
// the engine, host/ or plugins/.
package facts
