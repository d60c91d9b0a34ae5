#!/usr/bin/env bash
# Benchmarks sandboxes and proposals against their git/coreutils baselines on a generated tree
# of N files (default 10,000) with 1% of them changed, and prints each as a ratio
# (ours / baseline; at most 1.0 means at least as fast). Best of R runs (default 3) each.
#
#   prepare  vs  cp -a of the same files into input/ and work/ (the two copies prepare makes)
#   create   vs  git diff --no-index --binary input work
#   apply    vs  git apply changes.patch (each in a fresh copy of the workspace, synced first)
#
# Apply is measured AR times a round (default 3), so best of R*AR.
#
# Then the whole-repository sandbox on 100,000 files (scripts/bench-wholerepo.sh; WHOLE_N sets
# its size, WHOLE_N=0 skips it).
#
# Usage: scripts/bench-proposals.sh [BINARY]   (env: N=10000 R=3 AR=3 KEEP=1 to keep the temp dir)
set -euo pipefail
BIN=${1:-bin/agentcanvas}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
N=${N:-10000}
R=${R:-3}
AR=${AR:-3}
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

. "$(dirname "$0")/bench-measure.sh" # measure, best

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
cpu_prep_ours=(); cpu_prep_cp=(); cpu_create_ours=(); cpu_create_git=(); cpu_apply_ours=(); cpu_apply_git=()
add() { # add NAME WALL CPU
  eval "$1+=($2)"; eval "cpu_$1+=($3)"; }
for r in $(seq 1 "$R"); do
  add prep_ours $(measure "$BIN" sandbox prepare --workspace "$W" --run "bench$r" --agent worker src)
  C=$T/cp$r; mkdir -p "$C/input" "$C/work"
  add prep_cp $(measure sh -c 'cp -a "$1" "$2/input/" && cp -a "$1" "$2/work/"' sh "$W/src" "$C")

  A=$W/.agentcanvas/sandboxes/bench$r/worker
  changed=$(mutate "$A/work/src")
  add create_ours $(measure "$BIN" proposal create --workspace "$W" --run "bench$r" --agent worker)
  add create_git $(measure git -C "$A" diff --no-index --binary input work)

  # Apply takes a few ms, so one sample is at the mercy of a busy machine: AR samples a round,
  # each in fresh copies, taking turns at going first.
  for k in $(seq 1 "$AR"); do
    O=$T/apply-ours$r-$k; G=$T/apply-git$r-$k
    mkdir -p "$O" "$G"; cp -a "$W/src" "$O/"; cp -a "$W/src" "$G/"
    mkdir -p "$O/.agentcanvas/sandboxes/bench$r"; cp -a "$A" "$O/.agentcanvas/sandboxes/bench$r/"
    # The copies' writeback is theirs, not the apply's: an apply's two fsyncs would otherwise wait
    # for the file system to commit the 10,000 files just copied (git apply syncs nothing).
    sync
    ours() { add apply_ours $(measure "$BIN" proposal apply --workspace "$O" "$O/.agentcanvas/sandboxes/bench$r/worker/proposal/proposal.json"); }
    theirs() { add apply_git $(measure git -C "$G" apply "$A/proposal/changes.patch"); }
    if [ $((k % 2)) = 1 ]; then ours; theirs; else theirs; ours; fi
    diff -r "$O/src" "$G/src" >/dev/null || { echo "bench-proposals: our apply and git apply differ" >&2; exit 1; }
    diff -r "$O/src" "$A/work/src" >/dev/null || { echo "bench-proposals: our apply did not reproduce work/" >&2; exit 1; }
    rm -rf "$O" "$G"
  done
done

row() { # NAME BASELINE-LABEL VAR-OURS VAR-BASE
  local a b ca cb
  eval "a=\$(best \"\${$3[@]}\"); b=\$(best \"\${$4[@]}\"); ca=\$(best \"\${cpu_$3[@]}\"); cb=\$(best \"\${cpu_$4[@]}\")"
  awk -v n="$1" -v base="$2" -v a="$a" -v b="$b" -v ca="$ca" -v cb="$cb" 'BEGIN {
    printf "%-8s ours %8.1f ms   %-30s %8.1f ms   ratio %.2f   (cpu %7.1f / %7.1f ms, ratio %.2f)\n", n, a/1e6, base, b/1e6, a/b, ca/1e6, cb/1e6, (cb > 0 ? ca/cb : 0) }'
}
echo "proposals bench: $N files, $changed changed (1%), best of $R (apply: of $((R * AR))); ratio = ours / baseline"
row prepare "cp -a, to input/ and work/" prep_ours prep_cp
row create "git diff --no-index --binary" create_ours create_git
row apply "git apply" apply_ours apply_git

if [ "${WHOLE_N:-100000}" != 0 ]; then
  echo
  N=${WHOLE_N:-100000} R=1 "$(dirname "$0")/bench-wholerepo.sh" "$BIN"
fi
