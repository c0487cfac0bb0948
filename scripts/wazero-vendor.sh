#!/usr/bin/env bash
# Rebuilds third_party/wazero: wazero's released module (the version below,
# from the Go module proxy, checked against the hash below)
# without its tests, examples and tools, plus third_party/wazero.patch.
#
#   scripts/wazero-vendor.sh          rewrite third_party/wazero
#   scripts/wazero-vendor.sh -check   fail when third_party/wazero is not
#                                     exactly the release plus the patch
#
# To change the patch: edit third_party/wazero, then write the patch again
# with `scripts/wazero-vendor.sh -diff > third_party/wazero.patch`.
# Why ccm carries it: third_party/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v1.12.0
# The release's module hash, as go.sum had it before the replace directive
# (go mod tidy drops it then): the download is checked against this, not
# against the checksum database.
sum=h1:DuWcpNu/FzgEXgGBDp8J1Spc+CWOvvtvVyjKlaZopYU=
mode=${1:-}

info=$(GONOSUMDB=github.com/tetratelabs/wazero go mod download -json "github.com/tetratelabs/wazero@$version")
src=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$info")
got=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$info")
[ -d "$src" ] || { echo "wazero $version: download failed: $info" >&2; exit 1; }
[ "$got" = "$sum" ] || { echo "wazero $version: module hash $got, want $sum" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# release copies the release's build inputs (no tests, test data, examples,
# the wazero CLI or its site) into $1.
release() {
  (cd "$src" && find . -type f \( -name '*.go' -o -name '*.s' -o -name go.mod -o -name go.sum -o -name LICENSE -o -name NOTICE \) \
      ! -name '*_test.go' ! -path '*/testdata/*' ! -path './cmd/*' ! -path './examples/*' \
      ! -path './site/*' ! -path './internal/integration_test/*' ! -path './internal/testing/*' \
      ! -path '*/example/*' -print0) |
    (cd "$src" && xargs -0 cp --parents -t "$1")
  chmod -R u+w "$1"
}

case "$mode" in
-diff)
  mkdir "$tmp/a"
  release "$tmp/a"
  mkdir "$tmp/b"
  cp -r third_party/wazero/. "$tmp/b"
  (cd "$tmp" && diff -ruN a b) || true
  ;;
-check|"")
  mkdir "$tmp/wazero"
  release "$tmp/wazero"
  (cd "$tmp/wazero" && git apply -p1 --allow-empty --whitespace=nowarn "$OLDPWD/third_party/wazero.patch")
  if [ "$mode" = -check ]; then
    if ! diff -r "$tmp/wazero" third_party/wazero >/dev/null; then
      diff -r "$tmp/wazero" third_party/wazero | head -20 >&2
      echo "third_party/wazero is not wazero $version plus third_party/wazero.patch; run scripts/wazero-vendor.sh -diff > third_party/wazero.patch after changing it" >&2
      exit 1
    fi
    echo "ok  third_party/wazero is wazero $version plus third_party/wazero.patch"
  else
    rm -rf third_party/wazero
    cp -r "$tmp/wazero" third_party/wazero
  fi
  ;;
*)
  echo "usage: $0 [-check|-diff]" >&2
  exit 2
  ;;
esac
