#!/usr/bin/env bash
# Builds one .vsix per target: bundles the host code (and the webview, when its build script is
# present), cross-compiles the sidecar into bin/<target>/ and runs `vsce package --target`.
# Output: out/vsix/agentcanvas-<target>.vsix. Works offline.
#   TARGETS="linux-x64" scripts/package.sh     # just one target
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=${TARGETS:-"linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64"}  # empty: all
VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
GO=${GO:-go}

node scripts/build-host.mjs --production
if node -e 'process.exit(require("./package.json").scripts["build:webview"] ? 0 : 1)'; then npm run build:webview; fi

mkdir -p out/vsix
for target in $TARGETS; do
  case $target in
    linux-x64) goos=linux goarch=amd64 exe=agentcanvas ;;
    linux-arm64) goos=linux goarch=arm64 exe=agentcanvas ;;
    darwin-x64) goos=darwin goarch=amd64 exe=agentcanvas ;;
    darwin-arm64) goos=darwin goarch=arm64 exe=agentcanvas ;;
    win32-x64) goos=windows goarch=amd64 exe=agentcanvas.exe ;;
    *) echo "package.sh: unknown target $target" >&2; exit 2 ;;
  esac
  echo "== $target: sidecar (GOOS=$goos GOARCH=$goarch)"
  rm -rf "bin/$target"
  mkdir -p "bin/$target"
  CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch $GO build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o "bin/$target/$exe" ./sidecar/cmd/agentcanvas
  ignore=$(mktemp)
  { cat .vscodeignore; echo "!bin/$target/$exe"; } > "$ignore"
  echo "== $target: vsce package"
  npx --no-install vsce package --target "$target" --no-dependencies --skip-license --ignoreFile "$ignore" \
    -o "out/vsix/agentcanvas-$target.vsix"
  rm -f "$ignore"
done
ls -l out/vsix
