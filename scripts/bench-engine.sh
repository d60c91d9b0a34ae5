#!/usr/bin/env bash
# Engine overhead per agent turn with a no-op command agent against spawning the same process
# directly (and against runtime.Start alone), run alternately so machine load affects all
# alike. Prints engine-ns/turn, direct-ns/turn, runtime-ns/turn, ratio (aim: <= 1.2) and
# engine/runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'TurnOverhead' -benchtime "${BENCHTIME:-5x}" -count "${COUNT:-3}" ./sidecar/engine
