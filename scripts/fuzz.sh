#!/usr/bin/env bash
# Runs every Go fuzz target in the repository for a while each.
# Usage: scripts/fuzz.sh [FUZZTIME] [PATTERN]   (default 30s, all targets)
# CI runs it briefly; run it longer locally (e.g. 5m) before touching a parser.
#
# A target fails the script when the fuzzer found an input: it is written to
# <package>/testdata/fuzz/<Target>/ and reproduces with go test -run. A run
# that ends badly without writing an input (the fuzzing engine's own hiccups
# on a loaded machine, such as a worker ending during minimisation at the
# deadline) is reported as a warning with its output, not as a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-30s}
pattern=${2:-.}
status=0
count() { if [ -d "$1" ]; then ls "$1" | wc -l; else echo 0; fi; }
while IFS=: read -r file target; do
  pkg=$(dirname "$file")
  corpus="$pkg/testdata/fuzz/$target"
  # Run go in the package's own module (sdk/ is a module of its own).
  mod=$pkg
  while [ ! -f "$mod/go.mod" ]; do mod=$(dirname "$mod"); done
  rel=./${pkg#"$mod"}; rel=${rel/#.\/\//./}
  before=$(count "$corpus")
  printf '== %s %s (%s)\n' "$pkg" "$target" "$fuzztime"
  if out=$(go -C "$mod" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel 2 "$rel" 2>&1); then
    tail -2 <<<"$out"
    continue
  fi
  after=$(count "$corpus")
  if [ "$after" -gt "$before" ]; then
    echo "$out"
    echo "FAIL: $target found a failing input in $corpus; reproduce with: go -C $mod test -run '$target' $rel"
    status=1
  else
    echo "$out" | tail -15
    echo "warning: $target ended badly without a failing input (fuzzing engine hiccup); not counted as a failure"
  fi
done < <(grep -rHoE --include='*_test.go' '^func (Fuzz[A-Za-z0-9_]+)' . | sed 's/func //' | grep -E "$pattern" | sort)
exit $status
