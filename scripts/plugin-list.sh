#!/usr/bin/env bash
# Lists "<go package dir> <committed wasm>" for every Go plugin in the repo,
# read from the //go:generate lines that build them.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -rh --include='*.go' -E '^//go:generate .*GOOS=wasip1' plugins testdata sdk 2>/dev/null |
  while read -r line; do
    out=$(sed -E 's/.* -o ([^ ]+) .*/\1/' <<<"$line")
    pkg=$(awk '{print $NF}' <<<"$line")
    dir=$(grep -rl --include='*.go' -F "$line" plugins testdata sdk | head -1 | xargs dirname)
    echo "$(realpath --relative-to=. "$dir/$pkg") $(realpath --relative-to=. "$dir/$out")"
  done
