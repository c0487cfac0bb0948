#!/usr/bin/env bash
# Runs every Go fuzz target in the repository for a while each.
# Usage: scripts/fuzz.sh [FUZZTIME] [PATTERN]   (default 30s, all targets)
# CI runs it briefly; run it longer locally (e.g. 5m) before touching a parser.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-30s}
pattern=${2:-.}
status=0
while IFS=: read -r file target; do
  pkg=$(dirname "$file")
  printf '== %s %s (%s)\n' "$pkg" "$target" "$fuzztime"
  if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg" 2>&1 | tail -3; then
    status=1
  fi
done < <(grep -rHoE --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)' . | sed 's/func //' | grep -E "$pattern" | sort)
exit $status
