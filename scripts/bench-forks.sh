#!/usr/bin/env bash
# The cost of keeping a whole-repository worker's sandbox at the end of every turn, for forks
# (docs/runs.md, Forks): on a copy of Go's own src/ (SNAPSHOT_BENCH_SRC=DIR for another tree),
# the first snapshot of a run, a turn's snapshot with nothing changed and with six files changed,
# restoring a turn and moving a sandbox between two turns (a fork's replay), in time and disk,
# against cp -a and git worktree add of the same tree, and git status for scale.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git >/dev/null || { echo "bench-forks: git is required" >&2; exit 2; }
go test -run '^$' -bench 'WholeRepoTurns' -benchtime 1x -timeout 30m ./sidecar/snapshot | grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok\|Benchmark\)'
