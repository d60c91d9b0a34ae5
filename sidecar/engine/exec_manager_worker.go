// P01 manager_worker and P15 hierarchical_tree: managers assign, workers work in sandboxes.

package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

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
	}))
	if err != nil {
		return "", err
	}
	assigned := map[string]string{}
	for _, k := range keyedLines(plan.Text, "ASSIGN") {
		assigned[k.Key] = k.Value
	}
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
			r, err := c.ask(mgr, m, c.prompt(m, message{Intent: assigned[m], Inputs: []string{quote("Task", task)}, Plan: []string{"Do the assignment in your sandbox", "Report what changed"}, Actions: []string{"What you did, then a HANDOFF block (spec §3) naming the files you changed"}}))
			if err != nil {
				errs[i] = err
				return
			}
			report := quote("Handoff of "+m, r.Text)
			if r.Handoff == nil {
				report = quote("Reply of "+m+" (no HANDOFF block: a failed step)", r.Text)
				c.note("warning", map[string]any{"message": m + " replied without a HANDOFF block", "agent": m})
			} else {
				c.send(m, mgr, "handoff", map[string]any{"changedFiles": r.Handoff["ChangedFiles"]}, "")
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
	review, err := c.ask("", mgr, c.prompt(mgr, message{Intent: "Review your team's work; accept or reject each member's handoff", Inputs: append([]string{quote("Task", task)}, reports...), Plan: []string{"Check each handoff against its assignment", "Accept or reject it"}, Actions: []string{"ACCEPT <member id> or REJECT <member id>: <why>, one line each", "METRIC: tests_passed=1 when the accepted work passes its tests, else 0"}}))
	if err != nil {
		return "", err
	}
	c.recordVerdicts(mgr, review.Text)
	if depth == 0 {
		passed, ok := c.testCommand(todo)
		if !ok {
			passed, _ = metric(review.Text, "tests_passed")
		}
		c.st.Metrics["tests_passed"] = passed
	}
	return review.Text, nil
}

// recordVerdicts keeps a reviewer's latest ACCEPT / REJECT line for each member ("REJECT
// coder: why"): auto-apply never applies the proposal of a member whose handoff was rejected.
func (c *ictx) recordVerdicts(reviewer, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rejected == nil {
		c.rejected = map[string]string{}
	}
	for _, k := range keyedLines(text, "ACCEPT") {
		delete(c.rejected, k.Key)
	}
	for _, k := range keyedLines(text, "REJECT") {
		c.rejected[k.Key] = reviewer + ": " + k.Value
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

// testCommand runs params.test_command (argv) in every worker's sandbox work folder; ok is
// false when there is no command. passed is 1 when it exits 0 everywhere. Each output is kept
// as the sandbox's proposal/test.log.
func (c *ictx) testCommand(workers []string) (passed float64, ok bool) {
	argv := stringList(c.params["test_command"])
	if len(argv) == 0 || len(workers) == 0 {
		return 0, false
	}
	root, err := os.OpenRoot(c.r.o.Workspace)
	if err != nil {
		return 0, true
	}
	defer root.Close()
	passed = 1
	for _, w := range workers {
		paths, err := sandbox.PathsFor(c.r.o.Workspace, c.r.id, w)
		if err != nil {
			return 0, true
		}
		rel, err := sandbox.RelDir(c.r.id, w)
		if err != nil {
			return 0, true
		}
		if st, err := os.Stat(paths.WorkDir); err != nil || !st.IsDir() {
			continue // a member that worked in the workspace has nothing of its own to test
		}
		c.r.flushLog()
		cmd := exec.CommandContext(c.ctx, argv[0], argv[1:]...)
		cmd.Dir = paths.WorkDir
		out, err := cmd.CombinedOutput()
		if root.MkdirAll(filepath.Join(rel, "proposal"), 0o755) == nil {
			_ = root.WriteFile(filepath.Join(rel, "proposal", "test.log"), out, 0o644)
		}
		c.note("tests_run", map[string]any{"agent": w, "command": argv, "passed": err == nil})
		if err != nil {
			passed = 0
		}
	}
	return passed, true
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
