package runtime

import (
	"os"
	"strconv"
)

// agentOOMScoreAdj is every agent process's oom_score_adj: the most the kernel allows. An
// agent that takes the machine's memory, even in many processes each smaller than the
// sidecar, has its own processes ended by the OOM killer before the sidecar, the person's
// editor or anything else of theirs.
//
// It is set on the process that forks the agents (the guardian, before its first turn) and
// inherited from there by every process of every agent it serves: no window in which an agent
// could fork before it applies. Raising needs no privilege; lowering again needs
// CAP_SYS_RESOURCE (when a process with it set the value, as a root sidecar's guardian does,
// it is also the floor) and a writable /proc/self, which an agent's rules never grant.
const agentOOMScoreAdj = 1000

// raiseOOMScore sets pid's oom_score_adj ("self": this process's) to agentOOMScoreAdj.
func raiseOOMScore(pid string) error {
	return os.WriteFile("/proc/"+pid+"/oom_score_adj", []byte(strconv.Itoa(agentOOMScoreAdj)), 0)
}
