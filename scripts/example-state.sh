#!/usr/bin/env bash
# Regenerates .agentcanvas-example/: the workspace state left by a real dry run of
# flows/manager-worker.yaml (run checkpoint, JSONL log, sandboxes with their proposals,
# memory notes), made in a scratch git workspace so this checkout is untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${BIN:-$ROOT/bin/agentcanvas}
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT

git -C "$ws" init -q
mkdir -p "$ws/flows" "$ws/src"
cp flows/manager-worker.yaml "$ws/flows/"
cat > "$ws/src/parser.ts" <<'TS'
// A tiny parser the example flow's workers are asked to improve.
export function parseList(input: string): string[] {
  return input.split(",").map((s) => s.trim());
}
TS
cat > "$ws/src/parser.test.ts" <<'TS'
import { parseList } from "./parser";
console.assert(parseList("a, b").join("|") === "a|b");
TS
git -C "$ws" add -A
git -C "$ws" -c user.email=example@agentcanvas.dev -c user.name=example commit -qm "example workspace"

BIN="$BIN" scripts/example.sh flows/manager-worker.yaml "$ws" >/dev/null
rm -rf .agentcanvas-example
cp -a "$ws/.agentcanvas" .agentcanvas-example
# The flow the state came from, for reference.
mkdir -p .agentcanvas-example/flows
cp flows/manager-worker.yaml .agentcanvas-example/flows/
echo "== .agentcanvas-example/ regenerated:"
find .agentcanvas-example -maxdepth 3 | sort | head -40
