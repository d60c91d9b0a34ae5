package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/confine/confinetest"
)

// fakeBin holds the fake claude, codex and gemini (testdata/fakecli), on PATH for every test.
var fakeBin string

func TestMain(m *testing.M) {
	switch os.Getenv("RUNTIME_TEST_HELPER") {
	case "orphan-parent":
		os.Exit(orphanParent())
	case "tty-sidecar":
		os.Exit(ttySidecar())
	}
	if confinetest.Rerun() {
		// An attack run again as nobody (confinetest.AsRootAndNobody): the real CLIs only,
		// and nobody could not build the fakes. The attacker is the first run's.
		attackBin = os.Getenv(attackEnv)
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "runtime-fakes-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeBin = dir
	bin := filepath.Join(dir, "fakecli")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/fakecli").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the fake CLIs: %v\n%s", err, out)
		os.Exit(1)
	}
	for _, name := range []string{"claude", "codex", "gemini"} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	attackDir := buildAttacker()
	code := m.Run()
	os.RemoveAll(dir)
	if attackDir != "" {
		os.RemoveAll(attackDir)
	}
	os.Exit(code)
}

// deadline guards every wait in these tests against hanging; it is never what a test asserts.
const deadline = 60 * time.Second

func streamsDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs("testdata/streams")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fakeSpec is a spec for a fake CLI replaying scenario; the log file records each invocation.
func fakeSpec(t *testing.T, backend, scenario string) (Spec, string) {
	t.Helper()
	ws := t.TempDir()
	log := filepath.Join(t.TempDir(), "invocations.jsonl")
	return Spec{
		RunID: "r1", AgentID: "a1", Role: "worker", BackendID: backend, Workspace: ws,
		Env: map[string]string{"FAKECLI_DIR": streamsDir(t), "FAKECLI_SCENARIO": scenario, "FAKECLI_LOG": log},
	}, log
}

type invocation struct {
	CLI   string   `json:"cli"`
	Args  []string `json:"args"`
	Cwd   string   `json:"cwd"`
	Stdin string   `json:"stdin"`
	// Env holds the variables FAKECLI_LOG_ENV names that were set in the CLI's environment.
	Env map[string]string `json:"env"`
}

func invocations(t *testing.T, log string) []invocation {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []invocation
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var inv invocation
		if err := json.Unmarshal([]byte(l), &inv); err != nil {
			t.Fatal(err)
		}
		out = append(out, inv)
	}
	return out
}

func start(t *testing.T, s Spec, prompt string) *Process {
	t.Helper()
	p, err := Start(context.Background(), s, prompt)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { p.Stop("test cleanup"); p.Wait() })
	return p
}

// drain runs the agent to its end, calling on for each event, and returns all events.
func drain(t *testing.T, p *Process, on func(Event)) ([]Event, Result) {
	t.Helper()
	return drainWithin(t, p, on, deadline)
}

// drainWithin is drain with its own guard against hanging.
func drainWithin(t *testing.T, p *Process, on func(Event), limit time.Duration) ([]Event, Result) {
	t.Helper()
	var evs []Event
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-p.Events():
			if !ok {
				return evs, p.Wait()
			}
			evs = append(evs, ev)
			if on != nil {
				on(ev)
			}
		case <-timer.C:
			p.Stop("test deadline")
			t.Fatalf("agent did not finish within %v; events so far: %v", limit, kinds(evs))
		}
	}
}

func kinds(evs []Event) []EventKind {
	var k []EventKind
	for _, e := range evs {
		k = append(k, e.Kind)
	}
	return k
}

func ofKind(evs []Event, k EventKind) []Event {
	var out []Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func allText(evs []Event) string {
	var b strings.Builder
	for _, e := range ofKind(evs, EventText) {
		b.WriteString(e.Text)
	}
	return b.String()
}

// procState is the state letter of /proc/PID/stat (R, S, T, Z, …); ok is false when the
// process does not exist.
func procState(pid int) (byte, bool) {
	st, _, ok := procStat(pid)
	return st, ok
}

// alive reports whether pid is a live process (zombies are dead: they only await reaping by
// whoever their parent is, which in a container may be an init that never reaps).
func alive(pid int) bool {
	st, ok := procState(pid)
	return ok && st != 'Z' && st != 'X'
}

// waitUntil polls cond until it holds; the deadline only guards against hanging.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// orphanParent is the helper parent of TestNoOrphanAfterParentKilled: it starts an agent
// whose shell leaves a grandchild in its group and another in a new session, says "ready"
// once the agent runs, and waits to be killed.
func orphanParent() int {
	ws, _ := os.MkdirTemp("", "orphan-ws-")
	p, err := Start(context.Background(), Spec{
		AgentID: "orphan", BackendID: BackendCommand, Workspace: ws,
		Command: []string{"sh", "-c", "sleep 1000 & setsid sleep 1000 & echo ready; wait"},
	}, "")
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	w := bufio.NewWriter(os.Stdout)
	for ev := range p.Events() {
		if ev.Kind == EventText && strings.Contains(ev.Text, "ready") {
			fmt.Fprintf(w, "ready %d\n", p.PID())
			w.Flush()
		}
	}
	return 0
}

var _ = syscall.Kill
