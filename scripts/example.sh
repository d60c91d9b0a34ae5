#!/usr/bin/env bash
# The main job (README: `make example`): validate the example flows, run one end to end with
# the dry-run backend (no CLI, no API key), then check each proposal it produced against the
# workspace — the loop a person runs in the editor, from a terminal.
#   scripts/example.sh [FLOW] [WORKSPACE]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/agentcanvas}
FLOW=${1:-flows/manager-worker.yaml}
WS=${2:-$PWD}

echo "== agentcanvas validate flows/*.yaml"
"$BIN" validate flows/*.yaml

echo "== agentcanvas run --dry-run $FLOW   (events as JSON lines; shown without ts/flow/runId, cut at 150 columns)"
events=$(mktemp)
summary=$(mktemp)
trap 'rm -f "$events" "$summary"' EXIT
# The summary goes to stderr; kept apart so it is not interleaved with the event lines.
"$BIN" run --dry-run --non-interactive --workspace "$WS" "$FLOW" 2>"$summary" | tee "$events" |
  sed 's/^{"ts":[0-9]*,"flow":"[^"]*","runId":"[^"]*",/{/; s/"interactionId":"",//; s/"edgeId":"",//' | cut -c1-150
cat "$summary"

mapfile -t proposals < <(sed -n 's/.*"event":"proposal_created".*"proposal":"\([^"]*\)".*/\1/p' "$events")
if [ "${#proposals[@]}" -eq 0 ]; then
  echo "example: the run produced no proposal" >&2
  exit 1
fi
for p in "${proposals[@]}"; do
  echo "== agentcanvas proposal apply --check $p"
  "$BIN" proposal apply --check --workspace "$WS" "$p"
done
echo "== done: the run's state is under $WS/.agentcanvas/ (runs/, logs/, sandboxes/, memory/)"
