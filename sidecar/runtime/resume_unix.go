//go:build unix

package runtime

import (
	"syscall"
	"time"
)

// A pause (SIGTSTP to the agent's group) and its resume (SIGCONT) can both reach a process
// while it is inside fork(): the kernel then hands the new child both signals as pending, and
// the child, taking SIGCONT first and SIGTSTP after it, stops for good, outside any pause. Its
// parent waits on it (a shell's command substitution, say) and the turn never ends. Seen with
// an answer given at once (a test's, or --non-interactive's default) to a shell agent that
// forked right after printing its question. So a resume is checked: while the group is not
// paused again, a member that is stopped or has a stop signal pending is continued again
// (SIGCONT clears pending stop signals). A process of an agent that stops itself on purpose
// is continued too: nothing in an agent's group is meant to stay stopped but by a pause.

// The first check comes soon after the resume (a fork in progress then has finished within
// milliseconds), the later ones ever further apart, at most lastCheckGap, for as long as the
// group lives unpaused: a loaded machine may run the late child seconds after the resume.
const (
	firstCheck   = 2 * time.Millisecond
	lastCheckGap = 8 * time.Second
)

// settleResume continues members of the group that a resume left stopped, until the group is
// gone or paused again (pauses is the count at the resume).
func (c *osChild) settleResume(pauses int) {
	for d := firstCheck; ; d = min(2*d, lastCheckGap) {
		time.Sleep(d)
		c.mu.Lock()
		if c.gone || c.pauses != pauses {
			c.mu.Unlock()
			return
		}
		if groupLeftStopped(c.agentPID) {
			_ = syscall.Kill(-c.agentPID, sigResume)
		}
		c.mu.Unlock()
	}
}
