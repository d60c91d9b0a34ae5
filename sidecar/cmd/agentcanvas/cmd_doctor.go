package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/doctor"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
)

func init() {
	register(&command{name: "doctor", summary: "check what a real run needs: agent CLIs, their versions and logins, git, confinement", run: runDoctor})
}

const doctorUsage = `usage: agentcanvas doctor [--json] [--backend claude|codex|gemini]… [FLOW]
Checks git, what the kernel offers confinement, and each agent CLI: installed, its version
against the one AgentCanvas is tested with, and whether it can authenticate (an API key
variable set, or a login present; neither is printed). Each problem comes with the command
that fixes it. With FLOW, only the CLIs its agents use (backendId auto: any one of the three).
Exit status: 0 ready, 1 a needed check failed, 2 usage.`

func runDoctor(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newCmdFlags("doctor", doctorUsage, stdout, stderr)
	asJSON := fs.Bool("json", false, "print {checks: [{name, status, detail, fix?, backend?}], ready} as JSON")
	var backends listFlag
	fs.Var(&backends, "backend", "check only this `CLI` (repeat or comma-separate)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if fs.NArg() > 1 {
		return fs.usageError("expected at most one FLOW, got %d arguments", fs.NArg())
	}
	need := []string(backends)
	anyOne := len(need) == 0
	for _, b := range need {
		if _, ok := doctor.ByBackend(b); !ok {
			fmt.Fprintf(stderr, "agentcanvas doctor: --backend %q: use claude, codex or gemini\n", b)
			return exitUsage
		}
	}
	clis := doctor.Select(need)
	if fs.NArg() == 1 {
		src, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas doctor: %v\n", err)
			return exitUsage
		}
		need, anyOne = flowBackends(flow.Parse(fs.Arg(0), src))
		clis = nil // a flow of dry-run and command agents needs no CLI
		if anyOne || len(need) > 0 {
			clis = doctor.Select(need)
		}
	}
	checks := doctor.Run(context.Background(), doctor.Env{}, clis)
	ready := isReady(checks, need, anyOne)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"checks": checks, "ready": ready})
	} else {
		printChecks(stdout, checks, ready, anyOne)
	}
	if !ready {
		return exitFail
	}
	return exitOK
}

// flowBackends are the CLIs a flow's agents need: those named, and (anyOne) any one of the
// three for agents on auto. Dry-run and command agents need none.
func flowBackends(f *flow.Flow) (need []string, anyOne bool) {
	set := map[string]bool{}
	for _, a := range f.Agents {
		id := ""
		if a.Runtime != nil {
			id = a.Runtime.BackendID
		}
		switch id {
		case "", "auto":
			anyOne = true
		default:
			if _, ok := doctor.ByBackend(id); ok {
				set[id] = true
			}
		}
	}
	for b := range set {
		need = append(need, b)
	}
	sort.Strings(need)
	if anyOne && len(need) > 0 {
		return need, false // the named ones are needed; auto takes the first of them found
	}
	return need, anyOne
}

// isReady: git works, every needed CLI passes, and with anyOne at least one CLI does.
func isReady(checks []doctor.Check, need []string, anyOne bool) bool {
	bad := map[string]bool{}
	for _, c := range checks {
		if c.Status != doctor.Fail {
			continue
		}
		if c.Backend == "" {
			return false // git
		}
		bad[c.Backend] = true
	}
	if anyOne {
		for _, c := range doctor.CLIs {
			if !bad[c.Backend] {
				return true
			}
		}
		return false
	}
	for _, b := range need {
		if bad[b] {
			return false
		}
	}
	return true
}

func printChecks(w io.Writer, checks []doctor.Check, ready, anyOne bool) {
	mark := map[string]string{doctor.OK: "✓", doctor.Warn: "!", doctor.Fail: "✗"}
	width := 0
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	var fixes int
	for _, c := range checks {
		fmt.Fprintf(w, "%s %-*s  %s\n", mark[c.Status], width, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "  %-*s  fix: %s\n", width, "", c.Fix)
			fixes++
		}
	}
	switch {
	case ready && len(checks) == 2:
		fmt.Fprintln(w, "Ready: this flow's agents need no agent CLI (dry-run and command agents).")
	case ready && anyOne:
		fmt.Fprintln(w, "Ready for a real run (backendId auto takes the first CLI that is installed, in the order claude, codex, gemini).")
	case ready:
		fmt.Fprintln(w, "Ready for a real run.")
	default:
		fmt.Fprintf(w, "Not ready: %s. Run the fix above, then %s doctor again.\n", strings.TrimSpace(plural(doctor.Problems(checks), "problem")), invokedAs())
	}
}
