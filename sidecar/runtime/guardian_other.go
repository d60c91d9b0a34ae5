//go:build !linux

package runtime

import "os/exec"

// Without Linux's child subreaper and parent-death signal there is no guardian: agents are
// started directly in their own process group, which is killed when the agent exits. If the
// sidecar itself is killed, grandchildren that left the group can survive.
const guardianSupported = false

type guardian struct{ cmd *exec.Cmd }

func spawnGuarded(guardianRequest) (*osChild, error) { return nil, nil }
func putGuardian(*guardian)                          {}
func (g *guardian) endTurn() (int, bool)             { return -1, false }
func (g *guardian) wait() error                      { return nil }
func endAdopted() int                                { return 0 }
func dismissGuardians(string)                        {}
