package main

import (
	"os"
	"strings"
	"testing"
)

// Copy-paste hints name the command as it was typed: bin/agentcanvas after make build, the
// bare name when it was found on PATH; a test binary or another name prints "agentcanvas".
func TestInvokedAs(t *testing.T) {
	saved := os.Args[0]
	defer func() { os.Args[0] = saved }()
	for arg, want := range map[string]string{
		"bin/agentcanvas":                 "bin/agentcanvas",
		"agentcanvas":                     "agentcanvas",
		"/opt/my tools/agentcanvas":       "'/opt/my tools/agentcanvas'",
		"/tmp/go-build1/agentcanvas.test": "agentcanvas",
		"":                                "agentcanvas",
	} {
		os.Args[0] = arg
		if got := invokedAs(); got != want {
			t.Errorf("os.Args[0] %q: %q, want %q", arg, got, want)
		}
	}
}

// A wrong command line says what is wrong in one line before the usage.
func TestRunArgsProblemIsOneLine(t *testing.T) {
	code, _, e := runCmd(t, "run", "a.yaml", "b.yaml")
	if code != exitUsage || !startsWith(e, "agentcanvas run: one FLOW at a time, got 2: a.yaml b.yaml\nusage:") {
		t.Errorf("exit %d\n%s", code, e)
	}
	if code, _, e := runCmd(t, "run"); code != exitUsage || !startsWith(e, "agentcanvas run: no FLOW given") {
		t.Errorf("no flow: exit %d\n%s", code, e)
	}
}

func startsWith(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// The help names every command and subcommand a person can type, and run's usage every flag
// that matters (--backend, --task, --pace, run show); --pace is for dry runs only.
func TestHelpIsComplete(t *testing.T) {
	_, top, _ := runCmd(t, "--help")
	for _, w := range []string{"doctor", "revert", "ledger", "origins", "export", "run show"} {
		if !strings.Contains(top, w) {
			t.Errorf("top-level help lacks %q:\n%s", w, top)
		}
	}
	_, usage, _ := runCmd(t, "run", "--help")
	for _, w := range []string{"--backend BACKEND", "--task TEXT", "--pace DURATION", "--resume RUN_ID", "run show", "after FLOW"} {
		if !strings.Contains(usage, w) {
			t.Errorf("run's usage lacks %q", w)
		}
	}
	if code, _, e := runCmd(t, "run", "--pace", "1s", "flows/x.yaml"); code != exitUsage || !strings.Contains(e, "--pace goes with --dry-run") {
		t.Errorf("--pace without --dry-run: exit %d %q", code, e)
	}
}
