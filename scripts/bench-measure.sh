# Sourced by the benchmark scripts: measure CMD... runs CMD (output discarded) and prints
# "WALL_NS CPU_NS" (CPU = user + system time of CMD and its children), so a loaded machine
# shows in the wall ratio but not the CPU one; exit 1 counts as success (git diff --no-index
# exits 1 when the trees differ). best V... prints the smallest of the durations given.
measure() {
  python3 - "$@" <<'PY'
import os, subprocess, sys, time
t0 = time.perf_counter_ns()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
wall = time.perf_counter_ns() - t0
code = os.waitstatus_to_exitcode(status)
if code not in (0, 1):
    sys.exit("bench: %s exited %d" % (sys.argv[1:], code))
print(wall, int((ru.ru_utime + ru.ru_stime) * 1e9))
PY
}
best() { local m=""; for v in "$@"; do if [ -z "$m" ] || [ "$v" -lt "$m" ]; then m=$v; fi; done; echo "$m"; }
