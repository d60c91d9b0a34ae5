#!/usr/bin/env bash
# Benchmarks sandboxes and proposals against their git/coreutils baselines on a generated tree
# of N files (default 10,000) with 1% of them changed, and prints each as a ratio
# (ours / baseline; at most 1.0 means at least as fast). Best of R runs (default 3) each.
#
#   prepare  vs  cp -a of the same files into input/ and work/ (the two copies prepare makes)
#   create   vs  git diff --no-index --binary input work
#   apply    vs  git apply changes.patch (each in a fresh copy of the workspace)
#
# Usage: scripts/bench-proposals.sh [BINARY]   (env: N=10000 R=3 KEEP=1 to keep the temp dir)
set -euo pipefail
BIN=${1:-bin/agentcanvas}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
N=${N:-10000}
R=${R:-3}
command -v git >/dev/null || { echo "bench-proposals: git is required" >&2; exit 2; }
[ -x "$BIN" ] || { echo "bench-proposals: $BIN not built (make build)" >&2; exit 2; }

T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
W=$T/ws
mkdir -p "$W/src"

# The tree: N text files of ~40 lines in N/100 folders, one in 50 executable, a few binaries.
python3 - "$W/src" "$N" <<'PY'
import os, sys, random
root, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
for i in range(n):
    d = os.path.join(root, "pkg%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    if i % 500 == 7:
        p = os.path.join(d, "blob%05d.bin" % i)
        open(p, "wb").write(bytes(random.getrandbits(8) for _ in range(4096)))
        continue
    p = os.path.join(d, "file%05d.txt" % i)
    with open(p, "w") as f:
        for j in range(40):
            f.write("line %d of file %d: %s\n" % (j, i, "x" * random.randint(10, 60)))
    if i % 50 == 0:
        os.chmod(p, 0o755)
PY

now() { date +%s%N; }
best() { # best NAME... : prints the minimum of the durations (ns) given
  local m=""; for v in "$@"; do if [ -z "$m" ] || [ "$v" -lt "$m" ]; then m=$v; fi; done; echo "$m"; }

# 1% of the files change: every 100th file gets a line edited, an added line and an exec flip.
mutate() {
  python3 - "$1" "$N" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
changed = 0
for i in range(3, n, 100):
    p = os.path.join(root, "pkg%03d" % (i // 100), "file%05d.txt" % i)
    if not os.path.exists(p):
        continue
    lines = open(p).read().splitlines(True)
    lines[5] = "edited line\n"
    lines.insert(30, "inserted line\n")
    open(p, "w").write("".join(lines))
    changed += 1
print(changed)
PY
}

prep_ours=(); prep_cp=(); create_ours=(); create_git=(); apply_ours=(); apply_git=()
for r in $(seq 1 "$R"); do
  sync
  t0=$(now); "$BIN" sandbox prepare --workspace "$W" --run "bench$r" --agent worker src >/dev/null; t1=$(now)
  prep_ours+=($((t1 - t0)))
  C=$T/cp$r; mkdir -p "$C/input" "$C/work"
  t0=$(now); cp -a "$W/src" "$C/input/"; cp -a "$W/src" "$C/work/"; t1=$(now)
  prep_cp+=($((t1 - t0)))

  A=$W/.agentcanvas/sandboxes/bench$r/worker
  changed=$(mutate "$A/work/src")
  t0=$(now); "$BIN" proposal create --workspace "$W" --run "bench$r" --agent worker >/dev/null; t1=$(now)
  create_ours+=($((t1 - t0)))
  t0=$(now); (cd "$A" && git diff --no-index --binary input work >/dev/null || true); t1=$(now)
  create_git+=($((t1 - t0)))

  O=$T/apply-ours$r; G=$T/apply-git$r
  mkdir -p "$O" "$G"; cp -a "$W/src" "$O/"; cp -a "$W/src" "$G/"
  mkdir -p "$O/.agentcanvas/sandboxes/bench$r"; cp -a "$A" "$O/.agentcanvas/sandboxes/bench$r/"
  t0=$(now); "$BIN" proposal apply --workspace "$O" "$O/.agentcanvas/sandboxes/bench$r/worker/proposal/proposal.json" >/dev/null; t1=$(now)
  apply_ours+=($((t1 - t0)))
  t0=$(now); (cd "$G" && git apply "$A/proposal/changes.patch"); t1=$(now)
  apply_git+=($((t1 - t0)))
  diff -r "$O/src" "$G/src" >/dev/null || { echo "bench-proposals: our apply and git apply differ" >&2; exit 1; }
done

row() { # name ours base
  awk -v n="$1" -v a="$2" -v b="$3" -v base="$4" 'BEGIN { printf "%-8s ours %8.1f ms   %-34s %8.1f ms   ratio %.2f\n", n, a/1e6, base, b/1e6, a/b }'
}
echo "proposals bench: $N files, $changed changed (1%), best of $R"
row prepare "$(best "${prep_ours[@]}")" "$(best "${prep_cp[@]}")" "cp -a x2 (input/ and work/)"
row create "$(best "${create_ours[@]}")" "$(best "${create_git[@]}")" "git diff --no-index --binary"
row apply "$(best "${apply_ours[@]}")" "$(best "${apply_git[@]}")" "git apply"
