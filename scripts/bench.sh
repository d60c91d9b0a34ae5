#!/usr/bin/env bash
# `make bench`: every benchmark against its baseline, in one run, printed as ratios.
# Each part can be run alone (scripts/bench-<part>.sh). Set PARTS to choose, e.g.
#   PARTS="validate proposals" make bench
set -uo pipefail
cd "$(dirname "$0")/.."
PARTS=${PARTS:-"validate proposals merge agentproto server engine forks confine bus gateway webview"}
failed=()
for part in $PARTS; do
  echo
  echo "######## $part"
  case $part in
    merge)
      # the three-way merge of a 10,000-line file in process, against `git merge-file -p` on the same files
      go test -run '^$' -bench 'MergeFile$' -benchmem ./sidecar/proposal || failed+=("$part") ;;
    confine)
      # a confined no-op turn against the same turn unconfined: wall time (alternately), then
      # CPU time of runs of 100 turns each (their guardians and worlds included); reports ratios
      { go test -run '^$' -bench 'ConfinementOverhead' -benchtime 20x ./sidecar/runtime &&
        go test -run '^$' -bench 'ConfinementCPU' -benchtime 3x ./sidecar/runtime; } || failed+=("$part") ;;
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
