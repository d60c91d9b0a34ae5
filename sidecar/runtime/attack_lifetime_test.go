//go:build linux

package runtime

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// survivors lists the processes whose command line holds marker.
func survivors(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(b), marker) {
			out = append(out, fmt.Sprintf("%d %q", pid, strings.ReplaceAll(string(b), "\x00", " ")))
		}
	}
	return out
}

// leaveBehind is a script that leaves processes behind in every way a shell can: a setsid'd
// daemon with its output closed, a double fork into a new session, nohup, and a process
// that hops to a new pid (forks and exits) so that a kill by list finds a pid already gone.
func leaveBehind(marker string) string {
	return strings.Join([]string{
		`( setsid bash -c "exec -a ` + marker + `-setsid sleep 1000" </dev/null >/dev/null 2>&1 & )`,
		`nohup bash -c "exec -a ` + marker + `-nohup sleep 1000" </dev/null >/dev/null 2>&1 &`,
		`python3 -c 'import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["` + marker + `-double", "1000"])
    os._exit(0)
' </dev/null >/dev/null 2>&1`,
		`( setsid bash -c 'while :; do ( exec -a ` + marker + `-hopper sleep 1000 ) & sleep 0.01; kill $! 2>/dev/null; done' </dev/null >/dev/null 2>&1 & )`,
		`disown -a`,
		`echo LEFT`,
	}, "\n")
}

// A process an agent leaves behind, however it hides (a new session, a double fork, nohup,
// a process that keeps changing its pid), ends with the agent's turn: none is alive after
// the turn has ended, so nothing of the agent acts between its turns, on the proposal made
// from its work/ or on the files the sidecar reads after it. As root and as nobody, in a
// world and without.
func TestAttackNothingOutlivesTheTurn(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			w := newConfinedWorld(t)
			marker := fmt.Sprintf("cfa-turn-%d-%v", os.Getpid(), world)
			_, res := drain(t, start(t, w.spec("a", leaveBehind(marker)), ""), nil)
			if res.Status != StatusCompleted || !strings.Contains(res.Reply, "LEFT") {
				t.Fatalf("%s %s: %s", res.Status, res.Reason, res.Reply)
			}
			if s := survivors(marker); len(s) > 0 {
				t.Errorf("alive after the turn ended:\n%s", strings.Join(s, "\n"))
			}
		})
	})
}

// The same for a command run as the agent (a test_command running a planted file): when
// RunCommand returns, nothing it started is alive, and it returns although its children
// closed their output (it does not wait for them for good).
func TestAttackNothingOutlivesACommand(t *testing.T) {
	confinetest.Landlock(t)
	confinetest.AsRootAndNobody(t, func(t *testing.T) {
		inWorlds(t, func(t *testing.T, world bool) {
			w := newConfinedWorld(t)
			marker := fmt.Sprintf("cfa-cmd-%d-%v", os.Getpid(), world)
			s := w.spec("a", "")
			res, err := RunCommand(context.Background(), Command{Agent: s, Argv: []string{"bash", "-c", leaveBehind(marker)}})
			if err != nil || !strings.Contains(string(res.Output), "LEFT") {
				t.Fatalf("%v: %+v", err, res)
			}
			if s := survivors(marker); len(s) > 0 {
				t.Errorf("alive after the command returned:\n%s", strings.Join(s, "\n"))
			}
		})
	})
}
