#!/usr/bin/env bash
# Times whole `ccm apply` runs over manifests of N file resources.
#   cold:   first run, empty compilation cache, files absent (compile + create)
#   warm:   second run of the same manifest (cache warm, everything stable)
# Usage: scripts/bench-apply.sh [N ...]   (default: 1 100 1000 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(1 100 1000 2000)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/ccm" ./cmd/ccm
user=$(id -un); group=$(id -gn)

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", b-a}'; }

printf '| N | cold (s) | warm, stable (s) | warm per resource (µs) |\n|---:|---:|---:|---:|\n'
for n in "${sizes[@]}"; do
  dir="$work/n$n"; mkdir -p "$dir/files"
  {
    echo "ccm:"
    echo "  resources:"
    echo "    - file:"
    echo "        - defaults: {ensure: present, owner: $user, group: $group, mode: \"0644\"}"
    for ((i = 0; i < n; i++)); do
      echo "        - $dir/files/f$i.txt: {content: \"file $i\"}"
    done
  } > "$dir/manifest.yaml"
  export CCM_CACHE_DIR="$dir/cache"
  t0=$(now); "$work/ccm" apply "$dir/manifest.yaml" --no-report > "$dir/cold.log"; t1=$(now)
  "$work/ccm" apply "$dir/manifest.yaml" --no-report > "$dir/warm.log"; t2=$(now)
  if grep -q -E 'changed|failed' "$dir/warm.log"; then
    echo "second run of N=$n was not stable:" >&2; grep -m5 -E 'changed|failed' "$dir/warm.log" >&2; exit 1
  fi
  cold=$(elapsed "$t0" "$t1"); warm=$(elapsed "$t1" "$t2")
  per=$(awk -v w="$warm" -v n="$n" 'BEGIN{printf "%.0f", w*1e6/n}')
  printf '| %d | %s | %s | %s |\n' "$n" "$cold" "$warm" "$per"
done
