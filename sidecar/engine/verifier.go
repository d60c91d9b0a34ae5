package engine

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentcanvas/agentcanvas/sidecar/flow"
	"github.com/agentcanvas/agentcanvas/sidecar/runtime"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// The phase verification agent (agent-stdout-protocols.md §3: a completed phase's artifacts are
// collected, a verification agent runs, its report is written, then the person approves or the
// phase is reworked, at most three times). An interaction's params.verifier names an agent of
// the flow, of any backend: it gets the artifacts the phase lists (read from the working folder
// of the agent whose phase it is) and replies with its report, ending VERDICT: pass or
// VERDICT: fail. The report is kept in the run's folder beside its checkpoint and shown with
// the approval. params.verify_command is the simple form; a phase with neither says so.

// Limits on what a verifier is given: each artifact's first bytes, and the whole.
const (
	maxArtifactBytes = 64 << 10
	maxArtifactsText = 256 << 10
)

// verdictLine is what a verifier's reply must end with.
const verdictLine = "VERDICT: pass|fail"

// verification is a verifier's finding on one completed phase, as the approval shows it:
// verifier, passed, report (the report's workspace-relative file, for an agent), summary.
func verification(verifier string, passed bool, report, summary string) map[string]any {
	v := map[string]any{"verifier": verifier, "passed": passed, "summary": summary}
	if report != "" {
		v["report"] = report
	}
	return v
}

// verifyByAgent runs the interaction's verifier agent on node's completed phase, if it has
// one: the report is written and kept; a failure sends the phase back (rework), at most
// maxReworks times, then the agent is stopped. It reports whether it resolved the pause itself
// (rework or stop), and what to show with the approval otherwise.
func (c *ictx) verifyByAgent(p *runtime.Process, node string, pend *runtime.Pending, commandRan bool) (resolved bool, shown any) {
	verifier := str(c.params["verifier"])
	if verifier == "" {
		if !commandRan {
			c.r.emit(c.in.ID, "", "phase_verified", map[string]any{"agent": node, "id": pend.ID, "verifier": "none",
				"message": fmt.Sprintf("phase %s of %s has no verifier (params.verifier or params.verify_command): nothing checked it before your approval", phaseN(pend), node)})
			return false, "none: no verifier is set (params.verifier or params.verify_command)"
		}
		return false, verification("verify_command", true, "", "params.verify_command passed")
	}
	arts, listed := c.artifacts(node, pend)
	c.heard(verifier, node) // the verifier's step is from the agent whose phase it is
	rep, err := c.ask("", verifier, c.prompt(verifier, message{
		Intent:  fmt.Sprintf("Verify phase %s%s of %s: %s", phaseN(pend), phaseName(pend), node, c.task()),
		Inputs:  append([]string{"Artifacts the phase lists: " + firstNonEmpty(strings.Join(listed, ", "), "(none listed)")}, arts...),
		Plan:    []string{"Check each artifact against the phase and the task", "Write a verification report: what holds, what does not, what must be redone"},
		Actions: []string{"Your verification report", "VERDICT: pass or VERDICT: fail, on the last line"},
	}), need{line: verdictLine, has: func(t string) bool { _, ok := verdictOf(t); return ok }})
	passed, ok := false, false
	text := ""
	if rep != nil {
		text = rep.Text
		passed, ok = verdictOf(rep.Text)
	}
	if err != nil && rep == nil || !ok {
		why := "the verifier " + verifier + " gave no verdict"
		if err != nil {
			why += " (" + err.Error() + ")"
		}
		c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": why + "; phase " + phaseN(pend) + " goes to your approval unverified"})
		return false, "none: " + why
	}
	n := c.countRework(node, passed)
	report, werr := c.writeReport(node, verifier, pend, n, passed, listed, text)
	if werr != nil {
		c.r.emit(c.in.ID, "", "warning", map[string]any{"agent": node, "message": "the verification report could not be kept: " + werr.Error()})
	}
	summary := truncate(firstLine(text), 300)
	c.r.emit(c.in.ID, "", "phase_verified", map[string]any{"agent": node, "id": pend.ID, "passed": passed, "verifier": verifier, "report": report, "artifacts": listed, "reworks": n, "summary": summary})
	if passed {
		return false, verification(verifier, true, report, summary)
	}
	return c.rework(p, node, pend, n, fmt.Sprintf("The verifier %s found the phase not done (report: %s):\n%s", verifier, report, truncate(text, 4000))), nil
}

// countRework records a verification's result for node: a pass clears the count of failed
// ones, a failure adds one; it returns the count.
func (c *ictx) countRework(node string, passed bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if passed {
		c.reworks[node] = 0
	} else {
		c.reworks[node]++
	}
	return c.reworks[node]
}

// rework sends a failed phase back to node with feedback (counted as a retry), or stops it
// after maxReworks failures. It always resolves the pause.
func (c *ictx) rework(p *runtime.Process, node string, pend *runtime.Pending, n int, feedback string) bool {
	if n > maxReworks {
		p.Stop(fmt.Sprintf("the phase failed verification %d times", n))
		return true
	}
	c.r.metrics.addRetries(node, RetryPhaseRework, 1)
	if err := p.Rework(pend.ID, feedback); err != nil {
		c.r.emit(c.in.ID, "", "error", map[string]any{"agent": node, "message": "rework: " + err.Error()})
	}
	return true
}

// verdictOf reads a verifier's VERDICT: pass|fail line (the last wins).
func verdictOf(text string) (passed, ok bool) {
	v := strings.ToLower(strings.TrimSpace(fieldOr(text, "VERDICT")))
	switch {
	case leadsWith(v, "pass") || leadsWith(v, "passed") || leadsWith(v, "approve"):
		return true, true
	case leadsWith(v, "fail") || leadsWith(v, "failed") || leadsWith(v, "reject"):
		return false, true
	}
	return false, false
}

func phaseN(pend *runtime.Pending) string {
	if n, ok := pend.RawFields()["N"]; ok {
		return fmt.Sprint(n)
	}
	return "?"
}

func phaseName(pend *runtime.Pending) string {
	if s, ok := pend.RawFields()["Phase"].(string); ok && s != "" {
		return " (" + s + ")"
	}
	return ""
}

// artifacts are the files the phase lists (every list of its block's details: "Documents
// created", "Files"…), read from node's working folder for the verifier: inside the folder
// only, never through a link, regular files only, each cut at maxArtifactBytes. A listed file
// that is missing or refused is said so, for the verifier to weigh.
func (c *ictx) artifacts(node string, pend *runtime.Pending) (quoted, listed []string) {
	for k, v := range pend.RawFields() {
		if k == "N" || k == "Phase" {
			continue
		}
		items, _ := v.([]string)
		items = append(items, stringList(v)...)
		for _, x := range items {
			if x = strings.TrimSpace(x); x != "" {
				listed = append(listed, x)
			}
		}
	}
	dir := c.workingFolder(node)
	total := 0
	for _, name := range listed {
		body, err := readArtifact(dir, name)
		switch {
		case err != nil:
			quoted = append(quoted, name+": "+err.Error())
		case total+len(body) > maxArtifactsText:
			quoted = append(quoted, name+": not shown (the artifacts shown already reach "+fmt.Sprint(maxArtifactsText>>10)+" KiB)")
		default:
			total += len(body)
			quoted = append(quoted, quote("Artifact "+name, body))
		}
	}
	return quoted, listed
}

// workingFolder is where node works: its sandbox's work/ folder, or the workspace.
func (c *ictx) workingFolder(node string) string {
	if spec, err := c.spec(node); err == nil && spec.CwdMode == runtime.CwdAgentHome && spec.SandboxWork != "" {
		return spec.SandboxWork
	}
	return c.r.o.Workspace
}

// readArtifact reads one listed file inside dir as the sidecar reads any file an agent could
// have written: a clean relative path, opened beneath dir without following a link, a regular
// file, its first maxArtifactBytes.
func readArtifact(dir, name string) (string, error) {
	rel, err := safepath.Clean(name, safepath.Rules{})
	if err != nil {
		return "", fmt.Errorf("not a path inside the working folder (%v)", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.FromSlash(rel), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("missing: the phase lists it but it does not exist")
		}
		return "", fmt.Errorf("not read (%v)", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxArtifactBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxArtifactBytes {
		return string(b[:maxArtifactBytes]) + "\n… (cut at 64 KiB)", nil
	}
	return string(b), nil
}

// writeReport keeps a verification report in the run's folder, beside its checkpoint:
// .agentcanvas/runs/<run>/verification/<agent>-phase<N>-<attempt>.md. It returns the
// report's workspace-relative path.
func (c *ictx) writeReport(node, verifier string, pend *runtime.Pending, attempt int, passed bool, listed []string, text string) (string, error) {
	verdict := map[bool]string{true: "pass", false: "fail"}[passed]
	name := fmt.Sprintf("%s-phase%s-%d.md", safeName(node), safeName(phaseN(pend)), max(attempt, 1))
	if passed {
		name = fmt.Sprintf("%s-phase%s-pass.md", safeName(node), safeName(phaseN(pend)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Verification of phase %s%s of %s\n\n", phaseN(pend), phaseName(pend), node)
	fmt.Fprintf(&b, "- run: `%s`, interaction `%s`\n- verifier: %s\n- verdict: **%s**\n- failed verifications so far: %d of %d\n- artifacts: %s\n\n## Report\n\n%s\n",
		c.r.id, c.in.ID, verifier, verdict, attempt, maxReworks, firstNonEmpty(strings.Join(listed, ", "), "(none listed)"), strings.TrimSpace(text))
	rel := filepath.Join(RunsDir, c.r.id, "verification", name)
	return filepath.ToSlash(rel), writeInWorkspace(c.r.o.Workspace, rel, []byte(c.r.secrets.str(b.String())))
}

// writeInWorkspace writes a file of the sidecar's own state inside the workspace (its folder
// made), by a temporary file renamed over it, through the workspace's os.Root.
func writeInWorkspace(workspace, rel string, data []byte) error {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(rel), fmt.Sprintf(".%s.%d.tmp", filepath.Base(rel), os.Getpid()))
	if err := root.WriteFile(tmp, data, 0o644); err != nil {
		root.Remove(tmp)
		return err
	}
	return root.Rename(tmp, rel)
}

// safeName keeps letters, digits, - and _ of s (a report's file name).
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// verifierOf is the verifier agent an interaction names, for the cast (it may be outside the
// interaction's edges: any agent of the flow).
func verifierOf(f *flow.Flow, params map[string]any) string {
	v := str(params["verifier"])
	if n, ok := f.NodeByID(v); ok && n.Agent != nil {
		return v
	}
	return ""
}
