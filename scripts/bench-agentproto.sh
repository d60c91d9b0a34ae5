#!/usr/bin/env bash
# Parser throughput on 100 MB of generated agent output against a plain
# bufio.Scanner line count of the same bytes, run alternately so machine load
# affects both alike. Prints both MB/s figures and parser/scanner (aim: >= 0.5).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'ThroughputRatio' -benchtime "${BENCHTIME:-10x}" -count "${COUNT:-3}" ./sidecar/agentproto
