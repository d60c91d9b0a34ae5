#!/usr/bin/env bash
# Makes the real agent CLIs that package.json pins as devDependencies runnable, idempotently:
# Claude Code, Codex and Gemini CLI under node_modules/.bin, for the Go tests that run them
# against scripted model servers on 127.0.0.1 (sidecar/internal/modelserver, docs/agents.md).
#
# - npm ci, when node_modules is missing or older than package-lock.json (the whole project's:
#   4 min 19 s with an empty npm cache on a loaded 2-core machine; the three CLIs are about
#   860 MB of node_modules, 450 MB of downloads);
# - Claude Code's postinstall (`node install.cjs`), which npm skips when install scripts are
#   not allowed: it puts the native binary of @anthropic-ai/claude-code-<platform> in place of
#   the bin/claude.exe stub (a second or two);
# - each CLI's --version, checked against the pinned version.
# A second run does nothing but the three version checks (a few seconds; 22 s on that loaded
# machine, where starting node is slow).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== npm ci (node_modules is missing or older than package-lock.json)"
  npm ci --no-audit --no-fund
fi

pinned() { node -p "require('./package.json').devDependencies['$1']"; }

# version CLI PACKAGE: prints the CLI's --version, or nothing when it does not run.
version() { timeout 120 "node_modules/.bin/$1" --version 2>/dev/null | head -n1 || true; }

claude_pkg=node_modules/@anthropic-ai/claude-code
if [ ! -d "$claude_pkg" ]; then
  echo "setup-agent-clis: $claude_pkg is missing: run npm ci --no-audit --no-fund" >&2
  exit 1
fi
case "$(version claude)" in
  "$(pinned @anthropic-ai/claude-code)"*) ;;
  *)
    echo "== Claude Code postinstall (npm skipped it): node install.cjs"
    (cd "$claude_pkg" && node install.cjs)
    ;;
esac

status=0
for cli in "claude @anthropic-ai/claude-code" "codex @openai/codex" "gemini @google/gemini-cli"; do
  set -- $cli
  want=$(pinned "$2")
  got=$(version "$1")
  case "$got" in
    *"$want"*) echo "== $1: $got" ;;
    *)
      echo "setup-agent-clis: node_modules/.bin/$1 --version printed '${got:-nothing}', want $2@$want;" \
        "reinstall with: rm -rf node_modules && npm ci --no-audit --no-fund && scripts/setup-agent-clis.sh" >&2
      status=1
      ;;
  esac
done
exit $status
