#!/usr/bin/env bash
# Benchmarks a whole-repository sandbox (files: ["."]) on a generated repository of N files
# (default 100,000; .gitignore'd build output and node_modules beside them) with 0.1% of them
# changed, against the coreutils and git baselines, and prints each as a ratio (ours /
# baseline; at most 1.0 means at least as fast). Best of R runs (default 1: the tree is big).
#
#   prepare  vs  two cp -a of the same files (what prepare copies into input/ and work/)
#   create   vs  git diff --no-index --binary input work
#
# It also prints the disk space one worker's sandbox took: two copies of the files on ext4,
# metadata only on a file system that makes reflinks (XFS with reflink=1, btrfs, bcachefs).
# DIR puts the tree on a file system of your choice (default: a temporary folder).
#
# Usage: scripts/bench-wholerepo.sh [BINARY]   (env: N=100000 R=1 DIR=/mnt/xfs KEEP=1)
set -euo pipefail
BIN=${1:-bin/agentcanvas}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
N=${N:-100000}
R=${R:-1}
command -v git >/dev/null || { echo "bench-wholerepo: git is required" >&2; exit 2; }
[ -x "$BIN" ] || { echo "bench-wholerepo: $BIN not built (make build)" >&2; exit 2; }

T=$(mktemp -d ${DIR:+"$DIR/bench-wholerepo.XXXXXX"})
[ -n "${KEEP:-}" ] || trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
W=$T/ws
mkdir -p "$W"

# The repository: N text files of ~40 lines in folders of 100 under 10 top-level packages, one
# in 50 executable, a few binaries; ignored build/ and node_modules/ (not copied) beside them.
python3 - "$W" "$N" <<'PY'
import os, sys, random
root, n = sys.argv[1], int(sys.argv[2])
random.seed(2)
open(os.path.join(root, ".gitignore"), "w").write("build/\nnode_modules/\n")
for ign in ("build", "node_modules/dep"):
    os.makedirs(os.path.join(root, ign), exist_ok=True)
    for i in range(200):
        open(os.path.join(root, ign, "x%d.js" % i), "w").write("ignored\n")
for i in range(n):
    d = os.path.join(root, "mod%d" % (i % 10), "pkg%04d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    if i % 500 == 7:
        open(os.path.join(d, "blob%06d.bin" % i), "wb").write(random.randbytes(4096))
        continue
    p = os.path.join(d, "file%06d.txt" % i)
    with open(p, "w") as f:
        for j in range(40):
            f.write("line %d of file %d: %s\n" % (j, i, "x" * random.randint(10, 60)))
    if i % 50 == 0:
        os.chmod(p, 0o755)
PY

. "$(dirname "$0")/bench-measure.sh" # measure, best
used_kib() { sync; df --output=used -k "$1" | tail -1; }

mutate() { # 0.1% of the files: a line edited and one added
  python3 - "$1" "$N" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
changed = 0
for i in range(3, n, 1000):
    p = os.path.join(root, "mod%d" % (i % 10), "pkg%04d" % (i // 100), "file%06d.txt" % i)
    lines = open(p).read().splitlines(True)
    lines[5] = "edited line\n"
    lines.insert(30, "inserted line\n")
    open(p, "w").write("".join(lines))
    changed += 1
print(changed)
PY
}

prep_ours=(); prep_cp=(); create_ours=(); create_git=(); space=()
cpu_prep_ours=(); cpu_prep_cp=(); cpu_create_ours=(); cpu_create_git=()
add() { eval "$1+=($2)"; eval "cpu_$1+=($3)"; }
for r in $(seq 1 "$R"); do
  before=$(used_kib "$T")
  add prep_ours $(measure "$BIN" sandbox prepare --workspace "$W" --run "whole$r" --agent worker .)
  space+=($(( $(used_kib "$T") - before )))
  C=$T/cp$r; mkdir -p "$C"
  # the same files: the top-level folders and .gitignore, not the ignored build/ and node_modules/
  add prep_cp $(measure sh -c 'mkdir "$2/input" "$2/work" && cp -a "$1"/mod* "$1/.gitignore" "$2/input/" && cp -a "$1"/mod* "$1/.gitignore" "$2/work/"' sh "$W" "$C")
  rm -rf "$C"
  A=$W/.agentcanvas/sandboxes/whole$r/worker
  changed=$(mutate "$A/work")
  add create_ours $(measure "$BIN" proposal create --workspace "$W" --run "whole$r" --agent worker)
  add create_git $(measure git -C "$A" diff --no-index --binary input work)
done

row() { # NAME BASELINE-LABEL VAR-OURS VAR-BASE
  local a b ca cb
  eval "a=\$(best \"\${$3[@]}\"); b=\$(best \"\${$4[@]}\"); ca=\$(best \"\${cpu_$3[@]}\"); cb=\$(best \"\${cpu_$4[@]}\")"
  awk -v n="$1" -v base="$2" -v a="$a" -v b="$b" -v ca="$ca" -v cb="$cb" 'BEGIN {
    printf "%-8s ours %9.1f ms   %-30s %9.1f ms   ratio %.2f   (cpu %8.1f / %8.1f ms, ratio %.2f)\n", n, a/1e6, base, b/1e6, a/b, ca/1e6, cb/1e6, (cb > 0 ? ca/cb : 0) }'
}
fs=$(df --output=fstype "$T" | tail -1)
echo "whole-repository bench: $N files on $fs, $changed changed, best of $R; ratio = ours / baseline"
row prepare "cp -a twice (input/, work/)" prep_ours prep_cp
row create "git diff --no-index --binary" create_ours create_git
echo "disk space of one worker's sandbox: $(( $(best "${space[@]}") / 1024 )) MiB by df (the truth on a reflink file system; others writing to the same disk blur it), $(du -sk "$W/.agentcanvas/sandboxes/whole1" | cut -f1 | awk '{printf "%d", $1/1024}') MiB by du (which counts shared blocks once per file)"
