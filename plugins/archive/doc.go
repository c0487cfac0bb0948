// Command archive is the built-in "archive" resource type (docs/archive.md)
// as a WebAssembly plugin: build it with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared (see plugins/builtin.go). It downloads an archive
// through the host (ccm_net_fetch: the plugin opens no socket, the net
// grant applies to the URL and every redirect) into name, and extracts it
// under extract_parent entry by entry through ccm_fs_mkdir and
// ccm_fs_write, so the fs_write grant applies to every entry.
//
// Properties and decisions follow CCM's archive (model/resource_archive.go,
// resources/archive), with these differences (docs/decisions.md, "Archive
// and the net capability"):
//   - Extraction is done by the plugin (archive/tar, compress/gzip,
//     archive/zip), not by tar or unzip. The archive is read in two passes:
//     the first checks every entry (names relative, no "..", only regular
//     files, directories and hard links to earlier files, at most maxEntries entries, maxTotalBytes in
//     all and an expansion under maxRatio once past ratioFrom) and writes
//     nothing; the second writes, a file larger than part in parts
//     (abi.FSWriteRequest.Part). A bad archive therefore leaves nothing
//     extracted.
//   - Symlinks, devices and FIFOs are refused (the host has no call that
//     makes them); a hard link to an earlier file of the same archive is
//     written as a copy of that file, any other is refused.
//   - Extracted files and directories get owner and group (the archive's
//     own owners are ignored) and the archive's permission bits masked to
//     0o777; modification times are not kept.
//   - The checksum is verified before anything is extracted: by the host
//     during the download (a mismatch leaves name untouched), and again
//     (host-side sha256) just before an extraction of an existing file.
//
// Imports: the sdk, plugins/internal/props and the standard library.
package main
