#!/usr/bin/env bash
# `make bench`: every benchmark against its baseline, in one run, printed as ratios.
# Each part can be run alone (scripts/bench-<part>.sh). Set PARTS to choose, e.g.
#   PARTS="validate proposals" make bench
set -uo pipefail
cd "$(dirname "$0")/.."
PARTS=${PARTS:-"validate proposals agentproto server engine bus webview"}
failed=()
for part in $PARTS; do
  echo
  echo "######## $part"
  case $part in
    bus)
      go test -run '^$' -bench 'FiftyAgents' -benchtime 10x -benchmem ./sidecar/bus || failed+=("$part") ;;
    webview)
      if [ -d node_modules ]; then npm run -s bench:webview || failed+=("$part"); else echo "(skipped: run npm ci first)"; fi ;;
    *)
      if [ -x "scripts/bench-$part.sh" ]; then "scripts/bench-$part.sh" || failed+=("$part"); else echo "(no scripts/bench-$part.sh)"; fi ;;
  esac
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "benchmarks that failed: ${failed[*]}" >&2
  exit 1
fi
