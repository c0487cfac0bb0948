#!/usr/bin/env bash
# gofmt, go vet and staticcheck over ccm, the plugin SDK (sdk/, its own
# module) and the test plugins (testdata/plugins, which ./... skips), the
# plugins both for the host and as wasip1, as they are built. CI and
# `go tool -modfile=tools/go.mod task lint` run it.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-ed:"; echo "$unformatted"; exit 1; fi

# staticcheck is built once for this machine: `go tool` would build it for
# GOOS=wasip1 in the wasip1 runs below.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -modfile=tools/go.mod -o "$bin/staticcheck" honnef.co/go/tools/cmd/staticcheck
sc="$bin/staticcheck"
# staticcheck does not count //go:wasmexport functions as used, so in the
# wasip1 runs everything reachable only from an export would be reported as
# unused (U1000); that check runs in the host runs.
wasm_checks='all,-U1000,-ST1000,-ST1003,-ST1016,-ST1020,-ST1021,-ST1022,-ST1023'  # the default set, less U1000

run() { printf -- '-- %s\n' "$*"; "$@"; }

run go vet ./... ./testdata/plugins/...
run "$sc" ./... ./testdata/plugins/...
run env GOOS=wasip1 GOARCH=wasm go vet ./testdata/plugins/...
run env GOOS=wasip1 GOARCH=wasm "$sc" -checks "$wasm_checks" ./testdata/plugins/...

run go -C sdk vet ./...
(cd sdk && run "$sc" ./...)
run env GOOS=wasip1 GOARCH=wasm go -C sdk vet ./...
(cd sdk && run env GOOS=wasip1 GOARCH=wasm "$sc" -checks "$wasm_checks" ./...)
