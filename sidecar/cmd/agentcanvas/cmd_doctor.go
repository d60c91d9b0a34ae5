package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/doctor"
	"github.com/agentcanvas/agentcanvas/sidecar/engine"
	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/gateway"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/validate"
)

func init() {
	register(&command{name: "doctor", summary: "check what a real run needs: agent CLIs, their versions and logins, git, confinement", run: runDoctor})
}

const doctorUsage = `usage: agentcanvas doctor [--json] [--backend claude|codex|gemini]… [FLOW]
Checks git, what the kernel offers confinement, and each agent CLI: installed, its version
against the one AgentCanvas is tested with, and whether it can authenticate (an API key
variable set, or a login present; neither is printed). Each problem comes with the command
that fixes it. Without FLOW it is ready when one CLI can run, and names the usable backends.
With FLOW, exactly what that flow's run will use: only the CLIs its agents use (backendId auto:
the first installed), how each agent authenticates (a key its runtime.env names, which reaches
it through the model gateway, or the CLI's login), and that the model API it calls answers;
a key set but not named in the agent's runtime.env is named with the flow line to change.
For an agent whose calls go through the gateway: the model they are priced as, and any spend
limit (policy.budget, runtime.maxCostUsd, an interaction's max_cost_usd or max_tokens) below
what one call sets aside, which would refuse every call.
Exit status: 0 ready, 1 a needed check failed, 2 usage.`

func runDoctor(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newCmdFlags("doctor", doctorUsage, stdout, stderr)
	asJSON := fs.Bool("json", false, "print {checks: [{name, status, detail, fix?, backend?}], ready, usable} as JSON")
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
	var f *flow.Flow
	if fs.NArg() == 1 {
		src, err := os.ReadFile(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "agentcanvas doctor: %v\n", err)
			return exitUsage
		}
		f = flow.Parse(fs.Arg(0), src)
		need, anyOne = flowBackends(f)
		clis = nil // a flow of dry-run and command agents needs no CLI
		if anyOne || len(need) > 0 {
			clis = doctor.Select(need)
		}
	}
	ctx := context.Background()
	checks := doctor.Run(ctx, doctor.Env{}, clis)
	if f != nil {
		checks = append(checks, doctor.FlowChecks(ctx, doctor.Env{}, flowAgents(f), checks)...)
	}
	ready := isReady(checks, need, anyOne)
	usable := usableBackends(checks, clis)
	if *asJSON {
		enc := jsonOut(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"checks": checks, "ready": ready, "usable": usable})
	} else {
		printChecks(stdout, checks, ready, anyOne, f == nil, usable)
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

// flowAgents are the agents of f as doctor's flow checks read them, with the limits a run
// sets on the model gateway for each.
func flowAgents(f *flow.Flow) []doctor.Agent {
	run, interactions := engine.GatewayLimits(f)
	flowPrices, _ := validate.FlowPricing(f) // a bad table is validate's to say
	pricing := gateway.DefaultPricing().With(flowPrices)
	var out []doctor.Agent
	for i, a := range f.Agents {
		da := doctor.Agent{ID: a.ID, Backend: "auto", At: fmt.Sprintf("%s:%d", f.File, f.Span(fmt.Sprintf("/agents/%d", i)).Start.Line),
			Limits: doctor.Limits{Run: run, Interactions: map[string]gateway.Limit{}, Pricing: pricing}}
		if a.Runtime != nil {
			da.Backend = firstNonEmptyStr(a.Runtime.BackendID, "auto")
			da.Env, da.Model = a.Runtime.Env, a.Runtime.Model
			da.Limits.Agent = gateway.Limit{USD: a.Runtime.MaxCostUSD}
			da.At = fmt.Sprintf("%s:%d", f.File, f.Span(fmt.Sprintf("/agents/%d/runtime", i)).Start.Line)
		}
		for _, in := range f.Interactions {
			if takesPart(in, a.ID) {
				da.Limits.Interactions[in.ID] = interactions[in.ID]
			}
		}
		out = append(out, da)
	}
	return out
}

// takesPart: agent is a node of one of in's edges.
func takesPart(in *flow.Interaction, agent string) bool {
	for _, e := range in.Edges {
		if e.Source == agent || e.Target == agent {
			return true
		}
	}
	return false
}

// usableBackends are the CLIs checked whose every check passed (or only warned), in auto's
// order.
func usableBackends(checks []doctor.Check, clis []doctor.CLI) []string {
	bad := map[string]bool{}
	for _, c := range checks {
		if c.Status == doctor.Fail && c.Backend != "" {
			bad[c.Backend] = true
		}
	}
	usable := []string{}
	for _, c := range clis {
		if !bad[c.Backend] {
			usable = append(usable, c.Backend)
		}
	}
	return usable
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

func printChecks(w io.Writer, checks []doctor.Check, ready, anyOne, noFlow bool, usable []string) {
	w = termsafe.Writer(w) // a check's detail quotes a CLI's output and the flow's text
	mark := map[string]string{doctor.OK: "✓", doctor.Warn: "!", doctor.Fail: "✗"}
	width := 0
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	for _, c := range checks {
		fmt.Fprintf(w, "%s %-*s  %s\n", mark[c.Status], width, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "  %-*s  fix: %s\n", width, "", c.Fix)
		}
	}
	switch {
	case ready && noFlow && anyOne:
		fmt.Fprintf(w, "Ready for a real run with %s (backendId auto takes %s). ", joinOr(usable), usable[0])
		if n := len(doctor.CLIs) - len(usable); n > 0 {
			fmt.Fprintf(w, "The other %s not set up (above), and need not be.", map[bool]string{true: "CLI is", false: "CLIs are"}[n == 1])
		}
		fmt.Fprintln(w)
	case ready && len(checks) == 2:
		fmt.Fprintln(w, "Ready: this flow's agents need no agent CLI (dry-run and command agents).")
	case ready && anyOne:
		fmt.Fprintln(w, "Ready for a real run (backendId auto takes the first CLI that is installed, in the order claude, codex, gemini).")
	case ready:
		fmt.Fprintln(w, "Ready for a real run.")
	case noFlow && anyOne:
		fmt.Fprintf(w, "Not ready: no agent CLI can run yet, and one is enough. Run the fixes of the one you want above, then %s doctor again.\n", invokedAs())
	default:
		fmt.Fprintf(w, "Not ready: %s. Run the fix above, then %s doctor again.\n", strings.TrimSpace(plural(doctor.Problems(checks), "problem")), invokedAs())
	}
}

// joinOr is "a", "a or b", "a, b or c".
func joinOr(ss []string) string {
	if len(ss) < 2 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " or " + ss[len(ss)-1]
}
