// Package facts builds the fact tree templates see as Facts: the built-in
// families (host.info, network.interfaces, partition.partitions, cpu,
// memory, user), custom facts from /etc/choria/ccm and the user's
// $XDG_CONFIG_HOME/choria/ccm, and the CLI's --facts FILE and --fact k=v,
// merged in that order (docs/manifests.md). Load does all of it for a run.
//
// Families come from gopsutil, copied into plain maps and []any lists
// under gopsutil's JSON names (never structs), gathered in
// parallel under a deadline: a family that fails or is too slow is left
// out with a warning and never fails the run. host.info's platform fields
// are read from os-release here instead (platform.go says why).
//
// Custom facts directories are only read, never created.
//
// It may import runtime/data (merging, file decoding). It must not import
// the engine, host/ or plugins/.
package facts
