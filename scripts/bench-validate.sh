#!/usr/bin/env bash
# Validation benchmark (issue 2): load + validate a generated flow of 2,000 agents and 4,000
# edges (BenchmarkValidate), against a bare yaml.v3 decode of the same bytes
# (BenchmarkYAMLDecode), and print the ratio (aim: ≤ 2×).
#
# Two measures: wall time per operation (go test -bench, the fastest of COUNT runs), and CPU
# time per operation (user + system time of N extra iterations, divided by N), which stays
# meaningful when other jobs share the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
COUNT=${COUNT:-3}
N=${N:-5}
bin=$(mktemp -d)/validate.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
"$GO" test -c -o "$bin" ./sidecar/validate

echo "== go test -bench (wall time)"
out=$(cd sidecar/validate && "$bin" -test.run '^$' -test.bench '^Benchmark(Validate|YAMLDecode|Parse|ValidateOnly)$' -test.benchtime 3x -test.count "$COUNT" -test.benchmem)
echo "$out" | grep '^Benchmark'

# cpu BENCH ITERATIONS: user+system seconds of one run of the test binary.
cpu() {
  local TIMEFORMAT='%U %S'
  { time (cd sidecar/validate && "$bin" -test.run '^$' -test.bench "^$1\$" -test.benchtime "$2x" >/dev/null); } 2>&1 | awk '{print $1 + $2}'
}
per_op() { # CPU seconds per operation, setup excluded
  local one more
  one=$(cpu "$1" 1); more=$(cpu "$1" $((N + 1)))
  awk -v a="$one" -v b="$more" -v n="$N" 'BEGIN { printf "%.4f", (b - a) / n }'
}
echo "== CPU time per operation (N=$N)"
v=$(per_op BenchmarkValidate); y=$(per_op BenchmarkYAMLDecode); l=$(per_op BenchmarkParse)

echo "$out" | awk -v v="$v" -v y="$y" -v l="$l" '
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    for (i = 2; i < NF; i++) if ($(i+1) == "ns/op") ns = $i
    if (!(name in best) || ns < best[name]) best[name] = ns
  }
  END {
    printf "wall: validate (load + rules) %.1f ms = loader %.1f ms + rules %.1f ms; bare yaml.v3 decode %.1f ms\n",
      best["BenchmarkValidate"] / 1e6, best["BenchmarkParse"] / 1e6, best["BenchmarkValidateOnly"] / 1e6, best["BenchmarkYAMLDecode"] / 1e6
    printf "wall ratio validate / yaml decode: %.2fx (aim <= 2x)\n", best["BenchmarkValidate"] / best["BenchmarkYAMLDecode"]
    printf "cpu:  validate %.1f ms (of which the loader %.1f ms), bare yaml.v3 decode %.1f ms\n", v * 1000, l * 1000, y * 1000
    printf "cpu ratio validate / yaml decode:  %.2fx (aim <= 2x)\n", v / y
  }'
