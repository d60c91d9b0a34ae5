#!/usr/bin/env bash
# The main job (README: `make example`): validate the example flows, run one end to end with
# the dry-run backend (no CLI, no API key), check each proposal it produced against the
# workspace, and export them as one patch for `git am` — the loop a person runs in the editor,
# from a terminal.
#   scripts/example.sh [FLOW] [WORKSPACE]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/agentcanvas}
FLOW=${1:-flows/manager-worker.yaml}
WS=${2:-$PWD}

echo "== agentcanvas validate flows/*.yaml"
"$BIN" validate flows/*.yaml

echo
echo "== agentcanvas run --dry-run $FLOW"
# The run's view: a live status block on a terminal, plain lines when piped.
"$BIN" run --dry-run --non-interactive --workspace "$WS" "$FLOW"

# What the run produced, from its run_finished event in the JSONL log (the machine record;
# `run --json` prints the same events on stdout).
logs="$WS/.agentcanvas/logs/$(basename "${FLOW%.y*ml}")"
finished=$(cat "$logs"/*.jsonl | grep '"event":"run_finished"' | tail -n 1)
run_id=$(sed -n 's/.*"runId":"\([^"]*\)".*/\1/p' <<<"$finished")
mapfile -t proposals < <(sed -n 's/.*"proposals":\[\([^]]*\)\].*/\1/p' <<<"$finished" | tr ',' '\n' | tr -d '"' | grep .)
if [ "${#proposals[@]}" -eq 0 ]; then
  echo "example: the run produced no proposal" >&2
  exit 1
fi
for p in "${proposals[@]}"; do
  echo
  echo "== agentcanvas proposal apply --check $p"
  "$BIN" proposal apply --check --workspace "$WS" "$p"
done
echo
echo "== agentcanvas proposal export $run_id   (the run's proposals as one patch, for git am / git apply)"
patch=$(mktemp)
trap 'rm -f "$patch"' EXIT
"$BIN" proposal export --workspace "$WS" --out "$patch" "$run_id"
grep -E '^(From|Subject): ' "$patch"
if git -C "$WS" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "git apply --check:"
  git -C "$WS" apply --check --stat "$patch"
fi

echo
echo "== done: run $run_id; its state is under $WS/.agentcanvas/ (runs/, logs/, sandboxes/, memory/)"
