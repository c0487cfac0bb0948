// Package data builds the Data a manifest's templates see: deep merges,
// CLI `--data` assignments, Hiera resolution (docs/manifests.md: hierarchy
// order, overrides, merge first|deep), the `.env` environment
// (docs/manifests.md) and the check of data annotations (@require,
// @validate; docs/manifests.md) on the final data.
//
// Every function returns new maps: inputs are never mutated, and results
// share no map or list with them, so the engine may hand them to
// concurrent resources.
//
// It may import runtime/manifest (one YAML decoding rule set for every
// input file) and runtime/template (Hiera entries are templates). It must
// not import the engine, host/ or plugins/.
package data
