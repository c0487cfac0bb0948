// Package bundle packs, extracts, pins and signs manifest bundles: a gzip
// tarball of a directory holding manifest.yaml (CCM's layout), fetched from
// a remote source (runtime/source) and run from a private,
// content-addressed cache (docs/remote.md).
//
// Extraction is the only code that turns remote bytes into files, so it
// refuses everything but regular files and directories, absolute names,
// "..", links and device files, and caps entries, total size and the
// compression ratio (Limits). Verification is separate from extraction:
// Verify checks a sha256 pin and an ed25519 signature (nkeys) of the exact
// tarball bytes before a single file is written.
package bundle
