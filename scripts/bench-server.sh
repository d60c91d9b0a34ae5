#!/bin/sh
# Benchmarks of the sidecar server (sidecar/server/bench_test.go), printed with the ratio of the
# initialize round trip to a bare process start (`agentcanvas version`).
set -eu
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'ProcessStartVersion|InitializeRoundTrip|DidChangeDiagnostics|TrivialRequests' -benchtime "${BENCHTIME:-20x}" ./sidecar/server)
echo "$out"
echo "$out" | awk '
  /^BenchmarkProcessStartVersion/ { start = $3 }
  /^BenchmarkInitializeRoundTrip/ { init = $3 }
  END { if (start > 0 && init > 0) printf "initialize round trip / process start: %.2f\n", init / start }'
