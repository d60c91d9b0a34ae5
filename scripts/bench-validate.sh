#!/usr/bin/env bash
# Validation benchmark (issue 2): load + validate a generated flow of 2,000 agents and 4,000
# edges, against a bare yaml.v3 decode of the same bytes, and print the ratio (aim: ≤ 2×).
# The fastest of COUNT runs of each is compared, which is the least disturbed by other load.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
COUNT=${COUNT:-5}
out=$("$GO" test ./sidecar/validate -run '^$' -bench '^Benchmark(Validate|YAMLDecode|Parse|ValidateOnly)$' -benchtime 3x -count "$COUNT")
echo "$out" | grep '^Benchmark'
echo "$out" | awk '
  /^Benchmark/ {
    name = $1; sub(/-[0-9]+$/, "", name)
    for (i = 2; i < NF; i++) if ($(i+1) == "ns/op") ns = $i
    if (!(name in best) || ns < best[name]) best[name] = ns
  }
  END {
    if (!("BenchmarkValidate" in best) || !("BenchmarkYAMLDecode" in best)) { print "benchmark output missing"; exit 1 }
    printf "validate (load + rules), 2,000 agents / 4,000 edges: %.1f ms\n", best["BenchmarkValidate"] / 1e6
    printf "bare yaml.v3 decode of the same bytes:               %.1f ms\n", best["BenchmarkYAMLDecode"] / 1e6
    printf "  of which the loader (flow.Parse):                  %.1f ms\n", best["BenchmarkParse"] / 1e6
    printf "  of which the rules (validate.Flow):                %.1f ms\n", best["BenchmarkValidateOnly"] / 1e6
    printf "ratio validate / yaml decode: %.2fx (aim <= 2x)\n", best["BenchmarkValidate"] / best["BenchmarkYAMLDecode"]
  }'
