package runtime

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// agentOOMScoreAdj is every agent process's oom_score_adj: the most the kernel allows. An
// agent that takes the machine's memory, even in many processes each smaller than the
// sidecar, has its own processes ended by the OOM killer before the sidecar, the person's
// editor or anything else of theirs.
const agentOOMScoreAdj = 1000

// setAgentLimits gives process pid (0: this one) what every agent process has, whatever the
// sidecar was started with:
//
//   - oom_score_adj agentOOMScoreAdj. Raising needs no privilege; lowering again needs
//     CAP_SYS_RESOURCE (when a process with it set the value, as a root sidecar's guardian
//     does, it is also the floor) and a writable /proc/self, which an agent's rules never grant.
//   - no core dumps (RLIMIT_CORE 0, soft and hard: only CAP_SYS_RESOURCE raises a hard
//     limit). A crashed agent process would have the kernel write its memory (its
//     environment, its key, its conversation) into its working folder, a file the person
//     would then be shown as part of its proposal.
//
// The guardian sets them on itself before its first turn (so before PR_SET_DUMPABLE 0, which
// gives its /proc files to root): every process of every agent it forks inherits them, with
// no window in which an agent could fork before they apply.
func setAgentLimits(pid int) error {
	name := "self"
	if pid != 0 {
		name = strconv.Itoa(pid)
	}
	if err := os.WriteFile("/proc/"+name+"/oom_score_adj", []byte(strconv.Itoa(agentOOMScoreAdj)), 0); err != nil {
		return err
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_CORE, &unix.Rlimit{}, nil); err != nil {
		return os.NewSyscallError("prlimit RLIMIT_CORE", err)
	}
	return nil
}
