#!/usr/bin/env bash
# Times whole ccm runs (internal/benchapply) and, given a CCM binary, the
# same runs of CCM, interleaved (ccm, CCM, ccm, CCM, ...), with ratios.
#
# Usage: scripts/bench-apply.sh [-ref /path/to/ccm-of-choria [-ref-name CCM]] [-n 1,2000] [-runs 5]
#                               [-cases warm,ensure,apply1,cold,converge]
# The reference binary is built by whoever runs this; nothing here fetches it.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/ccm" ./cmd/ccm
go build -o "$work/benchapply" ./internal/benchapply
"$work/benchapply" -ccm "$work/ccm" "$@"
