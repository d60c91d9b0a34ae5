// P01 manager_worker and P15 hierarchical_tree: managers assign, workers work in sandboxes.

package engine

import (
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// P01 — the manager writes one ASSIGN line per worker, the workers work in parallel in their
// sandboxes and hand off, the manager reviews; tests_passed comes from params.test_command
// run in every worker's sandbox, else from the manager's METRIC: tests_passed=N.
func managerWorker(c *ictx) (string, error) {
	mgr := c.cast.one("manager")
	for {
		review, err := c.manage(mgr, c.cast.all("worker"), c.task(), 0)
		if err != nil {
			return "", err
		}
		if c.endRound() {
			return review, nil
		}
	}
}

// manage is one P01 round under mgr: assignments, the members' work (recursively, for
// sub-managers with members of their own, P15), the review. It sets tests_passed from the
// review (or the test command) when mgr is the top of the tree (depth 0).
func (c *ictx) manage(mgr string, members []string, task string, depth int) (string, error) {
	plan, err := c.ask("", mgr, c.prompt(mgr, message{
		Intent:  "Decompose the task into one assignment per member of your team: " + task,
		Inputs:  []string{"Team: " + strings.Join(members, ", ")},
		Plan:    []string{"Split the task", "Write one assignment per member"},
		Actions: []string{"One line per member: ASSIGN <member id>: <assignment>"},
	}), c.needAssign(members))
	if err != nil {
		return "", err
	}
	assigned := c.assignments(plan.Text, members)
	var todo []string
	for _, m := range members {
		if _, ok := assigned[m]; ok {
			todo = append(todo, m)
			typ := "task_assignment"
			if len(c.children(m)) > 0 {
				typ = "subtask" // to a sub-manager (P15)
			}
			c.send(mgr, m, typ, map[string]any{"assignment": truncate(assigned[m], 1000)}, "")
		} else {
			c.note("warning", map[string]any{"message": "no ASSIGN line for " + m + "; it is skipped this round", "agent": m})
		}
	}
	reports := make([]string, len(todo))
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for i, m := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kids := c.children(m); len(kids) > 0 && depth+1 < intParam(c.params, "max_depth", 2) {
				rep, err := c.manage(m, kids, assigned[m], depth+1)
				reports[i], errs[i] = quote("Subtree report of "+m, rep), err
				c.send(m, mgr, "subtree_report", map[string]any{"bytes": len(rep)}, "")
				return
			}
			r, err := c.ask(mgr, m, c.prompt(m, message{Intent: assigned[m], Inputs: []string{quote("Task", task)}, Plan: []string{"Do the assignment in your sandbox", "Report what changed"}, Actions: []string{"What you did, then a HANDOFF block naming the files you changed"}}))
			if err != nil {
				errs[i] = err
				return
			}
			// No HANDOFF block: the manager is told, and whatever the worker changed in its
			// sandbox is a proposal all the same (collect).
			report := quote("Handoff of "+m, r.Text)
			switch {
			case r.Handoff == nil && len(r.Changed) > 0:
				report = quote("Reply of "+m+" (no valid HANDOFF block; its proposal was made from its sandbox changes: "+strings.Join(r.Changed, ", ")+")", r.Text)
			case r.Handoff == nil:
				report = quote("Reply of "+m+" (no HANDOFF block, and no change in its sandbox)", r.Text)
			}
			if r.Handoff != nil || len(r.Changed) > 0 {
				c.send(m, mgr, "handoff", map[string]any{"changedFiles": r.Changed}, "")
			}
			reports[i] = report
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return "", e
		}
	}
	review, err := c.ask("", mgr, c.prompt(mgr, message{Intent: "Review your team's work; accept or reject each member's handoff", Inputs: append([]string{quote("Task", task)}, reports...), Plan: []string{"Check each handoff against its assignment", "Accept or reject it"}, Actions: []string{"ACCEPT <member id> or REJECT <member id>: <why>, one line each", "METRIC: tests_passed=1 when the accepted work passes its tests, else 0"}}), c.reviewNeeds(todo, depth)...)
	if err != nil {
		return "", err
	}
	c.recordVerdicts(mgr, review.Text, todo)
	if depth == 0 {
		passed, ok := c.testCommand(todo)
		if !ok {
			passed, _ = metric(review.Text, "tests_passed")
		}
		c.st.Metrics["tests_passed"] = passed
	}
	return review.Text, nil
}

// needAssign: the manager's plan assigns work to at least one member of its team (else no
// worker would work: the step fails rather than completing having done nothing).
func (c *ictx) needAssign(members []string) need {
	return need{line: "ASSIGN " + oneOf(members...) + ": <assignment>", has: func(t string) bool { return len(c.assignments(t, members)) > 0 }}
}

// assignments reads a plan's ASSIGN lines by the member they name (its id, or its name).
func (c *ictx) assignments(text string, members []string) map[string]string {
	names := c.names(members)
	out := map[string]string{}
	for _, k := range keyedLines(text, "ASSIGN") {
		if m := pickID(k.Key, members, names); m != "" {
			out[m] = k.Value
		}
	}
	return out
}

// reviewNeeds: the review accepts or rejects the members' work (auto-apply reads it), and at
// the top of the tree gives tests_passed when the flow's gate reads it and no test_command does.
func (c *ictx) reviewNeeds(worked []string, depth int) []need {
	if len(worked) == 0 {
		return nil
	}
	ids := append(slices.Clone(worked), "all")
	needs := []need{{line: "ACCEPT " + oneOf(ids...) + " or REJECT " + oneOf(ids...) + ": <why>", has: func(t string) bool {
		return len(verdictLines(t, "ACCEPT", ids)) > 0 || len(verdictLines(t, "REJECT", ids)) > 0
	}}}
	if depth == 0 && len(stringList(c.params["test_command"])) == 0 && c.gateReads("tests_passed") {
		needs = append(needs, needMetric("tests_passed", "METRIC: tests_passed=<0|1>"))
	}
	return needs
}

// recordVerdicts keeps a reviewer's latest ACCEPT / REJECT line for each member ("REJECT
// coder: why"; "all" for every one): auto-apply never applies the proposal of a member whose
// handoff was rejected.
func (c *ictx) recordVerdicts(reviewer, text string, members []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rejected == nil {
		c.rejected = map[string]string{}
	}
	ids := append(slices.Clone(members), "all")
	each := func(id string) []string {
		if id == "all" {
			return members
		}
		return []string{id}
	}
	for _, k := range verdictLines(text, "ACCEPT", ids) {
		for _, m := range each(k.Key) {
			delete(c.rejected, m)
		}
	}
	for _, k := range verdictLines(text, "REJECT", ids) {
		for _, m := range each(k.Key) {
			c.rejected[m] = reviewer + ": " + firstNonEmpty(k.Value, "(no reason given)")
		}
	}
}

// children are the nodes a node has edges to (its team in a tree).
func (c *ictx) children(node string) []string {
	var out []string
	for _, e := range c.in.Edges {
		if e.Source == node && e.Target != node {
			out = append(out, e.Target)
		}
	}
	return out
}

// testCommand runs params.test_command (argv) in every worker's sandbox work folder, as that
// worker: confined by its rules, with its environment (runtime.RunCommand), since it runs the
// worker's files (a test_x.py it wrote is run by unittest). ok is false when there is no
// command. passed is 1 when it exits 0 everywhere. Each result is kept with the sandbox's
// proposal (its output as proposal/test.log) for the review, and a failure goes into the
// worker's next prompt.
func (c *ictx) testCommand(workers []string) (passed float64, ok bool) {
	argv := stringList(c.params["test_command"])
	if len(argv) == 0 || len(workers) == 0 {
		return 0, false
	}
	passed = 1
	for _, w := range workers {
		paths, err := sandbox.PathsFor(c.r.o.Workspace, c.r.sandboxRun(w), w)
		if err != nil {
			return 0, true
		}
		if st, err := os.Stat(paths.WorkDir); err != nil || !st.IsDir() {
			continue // a member that worked in the workspace has nothing of its own to test
		}
		if res := c.recordTest(w, proposal.TestKindTest, argv, c.runAs(w, argv, paths.WorkDir)); !res.Passed {
			passed = 0
		}
	}
	return passed, true
}

// runAs runs argv as agent node (its rules, its environment) in dir, for a check of its work.
func (c *ictx) runAs(node string, argv []string, dir string) commandRun {
	spec, err := c.spec(node)
	if err != nil {
		return commandRun{err: err}
	}
	c.r.flushLog()
	res, err := runtime.RunCommand(c.ctx, runtime.Command{Agent: spec, Argv: argv, Dir: dir})
	for _, msg := range res.Warnings {
		c.note("warning", map[string]any{"agent": node, "message": strings.Join(argv, " ") + ": " + msg})
	}
	return commandRun{res: res, err: err}
}

// P15 — a tree of managers: the root assigns to sub-managers, each runs a P01 round with its
// workers (subtrees in parallel) and reports up; the root's review carries the gate.
func hierarchicalTree(c *ictx) (string, error) {
	root := c.cast.one("root")
	for {
		review, err := c.manage(root, c.children(root), c.task(), 0)
		if err != nil {
			return "", err
		}
		if c.endRound() {
			return review, nil
		}
	}
}
