#!/usr/bin/env bash
# Rebuilds every committed plugin .wasm from its source into a temp dir and
# fails when one differs: a committed binary must be what its source builds.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
# The built-ins' data segments are merged after the build (plugins/builtin.go).
go build -o "$tmp/wasmdata" ./internal/wasmdata
# Each line: <package dir> <committed wasm>
while read -r pkg wasm; do
  [ -n "$pkg" ] || continue
  GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o "$tmp/out.wasm" "./$pkg"
  case "$wasm" in plugins/wasm/*) "$tmp/wasmdata" "$tmp/out.wasm" ;; esac
  if ! cmp -s "$tmp/out.wasm" "$wasm"; then
    echo "stale plugin: $wasm differs from a fresh build of ./$pkg; run: go tool -modfile=tools/go.mod task plugins" >&2
    status=1
  else
    echo "ok  $wasm"
  fi
done < <(bash scripts/plugin-list.sh)
exit $status
