package runtime

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// The sidecar is the child subreaper of everything its agents start: a process whose
// guardian died (killed by someone outside, since no agent can signal it) is re-parented to
// the sidecar instead of init, with every descendant that loses its parent after it. When a
// guardian dies during a turn, endAdopted ends them all, so nothing an agent started, a
// setsid'd grandchild included, outlives its turn.

var subreaperOnce sync.Once

// becomeSubreaper makes the sidecar the child subreaper, before its first guardian starts.
// A failure leaves orphans to init, as before; the guardians are subreapers themselves.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		_, _, _ = syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0)
	})
}

// ourChildren are the processes the sidecar started in a process group of their own (the
// guardians): endAdopted leaves them alone. Children started in the sidecar's own group
// (git, language servers) are never taken for adopted ones.
var ourChildren struct {
	sync.Mutex
	m map[int]bool
}

func addChild(pid int) {
	ourChildren.Lock()
	if ourChildren.m == nil {
		ourChildren.m = map[int]bool{}
	}
	ourChildren.m[pid] = true
	ourChildren.Unlock()
}

func removeChild(pid int) {
	ourChildren.Lock()
	delete(ourChildren.m, pid)
	ourChildren.Unlock()
}

func isOurChild(pid int) bool {
	ourChildren.Lock()
	defer ourChildren.Unlock()
	return ourChildren.m[pid]
}

var endAdoptedMu sync.Mutex

// endAdopted kills and reaps every process the sidecar adopted: its children in another
// process group that it did not start. Killing one re-parents its children to the sidecar
// before it can be reaped, so the next round finds them: it goes on until a round finds none.
// It returns how many it ended.
func endAdopted() int {
	endAdoptedMu.Lock()
	defer endAdoptedMu.Unlock()
	self, group := os.Getpid(), syscall.Getpgrp()
	ended := 0
	for {
		var found []int
		for _, pid := range pids() {
			if ppid, pgid, ok := procParent(pid); ok && ppid == self && pgid != group && !isOurChild(pid) {
				found = append(found, pid)
			}
		}
		if len(found) == 0 {
			return ended
		}
		for _, pid := range found {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for _, pid := range found {
			for {
				if _, err := syscall.Wait4(pid, nil, 0, nil); err != syscall.EINTR {
					break
				}
			}
		}
		ended += len(found)
	}
}

// pids lists the processes in /proc.
func pids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// procParent reads the parent and process group of pid from /proc/PID/stat (after the
// parenthesised command name, which may itself hold spaces and parentheses).
func procParent(pid int) (ppid, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	return ppid, pgid, err1 == nil && err2 == nil
}
