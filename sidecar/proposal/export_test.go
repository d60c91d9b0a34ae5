package proposal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

const exportRun = "run_20261124-120000_abcdef"

// edit is what an agent does to one file in its sandbox: write content ("F:…", "X:…"), or
// delete (""), or chmod only ("chmod:644").
type edits map[string]string

// propose gives agent a sandbox of the files it edits and turns its edits into a proposal.
func propose(t *testing.T, ws, agent string, e edits) string {
	t.Helper()
	proposeIn(t, ws, exportRun, agent, e)
	return ".agentcanvas/sandboxes/" + exportRun + "/" + agent + "/proposal/proposal.json"
}

// proposeIn is propose in a run of its own.
func proposeIn(t *testing.T, ws, run, agent string, e edits) *Created {
	t.Helper()
	var files []string
	for p := range e {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			files = append(files, p)
		}
	}
	paths, err := sandbox.Prepare(context.Background(), sandbox.Options{Workspace: ws, RunID: run, AgentID: agent, Files: files, AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	names := slices.Sorted(maps.Keys(e))
	slices.SortStableFunc(names, func(x, y string) int { return cmp.Compare(btoi(e[x] != ""), btoi(e[y] != "")) }) // deletions first
	for _, p := range names {
		v := e[p]
		full := filepath.Join(paths.WorkDir, filepath.FromSlash(p))
		switch {
		case v == "":
			if err := os.Remove(full); err != nil {
				t.Fatal(err)
			}
		case v == "chmod:644":
			os.Chmod(full, 0o644)
		default:
			os.Remove(full)
			writeTree(t, paths.WorkDir, map[string]string{p: v})
		}
	}
	c, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: run, AgentID: agent, Notes: "Work of " + agent + "\nin two lines"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gitRepo makes a committed git workspace of tree (the sandboxes ignored, as in a project
// that uses AgentCanvas).
func gitRepo(t *testing.T, tree map[string]string) string {
	t.Helper()
	needGit(t)
	ws := t.TempDir()
	tree[".gitignore"] = "F:.agentcanvas/\n"
	writeTree(t, ws, tree)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "base"}} {
		if out, err := run(t, ws, "git", args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return ws
}

func lines(from, to int, format string) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// Three agents' proposals, two of them changing different lines of one file, with a
// deletion, a mode change, a binary file and a name git quotes: the export applies with
// `git apply` and `git am` (one commit per proposal, authored by its agent), and both leave
// exactly the tree all three proposals make.
func TestExportAppliesWithGitApplyAndGitAm(t *testing.T) {
	big := lines(1, 30, "line %d\n")
	ws := gitRepo(t, map[string]string{
		"src/big.txt":    "F:" + big,
		"src/old.txt":    "F:old\n",
		"run.sh":         "X:#!/bin/sh\necho hi\n",
		"docs/ä file.md": "F:# title\n",
	})
	bigA := strings.Replace(strings.Replace(big, "line 2\n", "line two\n", 1), "line 3\n", "", 1)
	propose(t, ws, "a-coder", edits{"src/big.txt": "F:" + bigA, "src/old.txt": "", "run.sh": "chmod:644"})
	bigB := strings.Replace(big, "line 20\nline 21\n", "line 20\nline 20.5\nline 21 changed\n", 1)
	propose(t, ws, "b-tester", edits{"src/big.txt": "F:" + bigB, "test/new_test.txt": "F:a test\n", "img/logo.bin": "F:\x00\x01binary\x00"})
	bigC := strings.Replace(big, "line 30\n", "line 30\nline 31\n", 1)
	propose(t, ws, "c-docs", edits{"src/big.txt": "F:" + bigC, "docs/ä file.md": "F:# title\n\nMore.\n"})

	ex, err := Export(context.Background(), ws, exportRun, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Proposals) != 3 || ex.Proposals[0].Agent != "a-coder" || ex.Proposals[2].Agent != "c-docs" {
		t.Fatalf("exported %+v", ex.Proposals)
	}
	want := gitView(snapshot(t, ws, true))
	want["src/big.txt"] = "F-:" + strings.Replace(strings.Replace(strings.Replace(big, "line 2\n", "line two\n", 1), "line 3\n", "", 1), "line 20\nline 21\n", "line 20\nline 20.5\nline 21 changed\n", 1)
	want["src/big.txt"] = strings.Replace(want["src/big.txt"], "line 30\n", "line 30\nline 31\n", 1)
	delete(want, "src/old.txt")
	want["run.sh"] = "F-:#!/bin/sh\necho hi\n"
	want["test/new_test.txt"] = "F-:a test\n"
	want["img/logo.bin"] = "F-:\x00\x01binary\x00"
	want["docs/ä file.md"] = "F-:# title\n\nMore.\n"
	for k := range want { // folders: git records files only
		if strings.HasPrefix(want[k], "D:") {
			delete(want, k)
		}
	}
	patch := filepath.Join(t.TempDir(), "run.patch")
	os.WriteFile(patch, ex.Patch, 0o644)

	for _, tool := range []string{"apply", "am"} {
		t.Run(tool, func(t *testing.T) {
			clone := t.TempDir()
			if out, err := run(t, clone, "git", "clone", "-q", ws, "."); err != nil {
				t.Fatalf("clone: %v %s", err, out)
			}
			args := []string{"apply", "--index", patch}
			if tool == "am" {
				args = []string{"am", "-q", patch}
			}
			if out, err := run(t, clone, "git", args...); err != nil {
				t.Fatalf("git %s: %v\n%s\n%s", tool, err, out, ex.Patch)
			}
			got := gitView(snapshot(t, clone, true))
			for k := range got {
				if strings.HasPrefix(got[k], "D:") {
					delete(got, k)
				}
			}
			if d := diffSnapshots(got, want); d != "" {
				t.Errorf("tree after git %s differs from the three proposals':\n%s", tool, d)
			}
			if tool == "am" {
				log, _ := run(t, clone, "git", "log", "--format=%an <%ae>|%s", "-3")
				wantLog := "c-docs (AgentCanvas) <c-docs@agentcanvas.invalid>|c-docs: Work of c-docs\n" +
					"b-tester (AgentCanvas) <b-tester@agentcanvas.invalid>|b-tester: Work of b-tester\n" +
					"a-coder (AgentCanvas) <a-coder@agentcanvas.invalid>|a-coder: Work of a-coder\n"
				if log != wantLog {
					t.Errorf("git log:\n%s\nwant:\n%s", log, wantLog)
				}
				body, _ := run(t, clone, "git", "log", "-1", "--format=%b", "HEAD~2")
				if !strings.Contains(body, "in two lines") || !strings.Contains(body, "Proposal: .agentcanvas/sandboxes/"+exportRun+"/a-coder/proposal/proposal.json") {
					t.Errorf("commit message body:\n%s", body)
				}
			}
		})
	}
	// The workspace itself: the patch applies to it as it is (it is what the patch is made against).
	if out, err := run(t, ws, "git", "apply", "--check", patch); err != nil {
		t.Errorf("git apply --check in the workspace: %v %s", err, out)
	}

	// Named agents only: the others' changes to the shared file are not in it.
	ex, err = Export(context.Background(), ws, exportRun, ExportOptions{Agents: []string{"c-docs"}})
	if err != nil || len(ex.Proposals) != 1 || strings.Contains(string(ex.Patch), "line two") {
		t.Fatalf("export of c-docs: %v %+v", err, ex)
	}
	os.WriteFile(patch, ex.Patch, 0o644)
	if out, err := run(t, ws, "git", "apply", "--check", patch); err != nil {
		t.Errorf("c-docs alone: %v %s", err, out)
	}
}

// Two proposals that cannot be combined are refused, naming both agents and the file.
func TestExportRefusesConflictingProposals(t *testing.T) {
	big := lines(1, 12, "line %d\n")
	for _, tc := range []struct {
		name   string
		a, b   edits
		path   string
		reason string
	}{
		{"overlapping lines", edits{"f.txt": "F:" + strings.Replace(big, "line 5\n", "five\n", 1)}, edits{"f.txt": "F:" + strings.Replace(big, "line 5\nline 6\n", "5\n6\n", 1)}, "f.txt", "same or adjacent lines (line 5 and lines 5–6)"},
		{"adjacent lines", edits{"f.txt": "F:" + strings.Replace(big, "line 5\n", "five\n", 1)}, edits{"f.txt": "F:" + strings.Replace(big, "line 6\n", "six\n", 1)}, "f.txt", "same or adjacent lines (line 5 and line 6)"},
		{"insertions at one place", edits{"f.txt": "F:" + strings.Replace(big, "line 5\n", "line 5\nA\n", 1)}, edits{"f.txt": "F:" + strings.Replace(big, "line 5\n", "line 5\nB\n", 1)}, "f.txt", "an insertion after line 5 and an insertion after line 5"},
		{"delete and edit", edits{"f.txt": ""}, edits{"f.txt": "F:" + strings.Replace(big, "line 9\n", "nine\n", 1)}, "f.txt", "one deletes it and the other changes it"},
		{"both add", edits{"new.txt": "F:from a\n"}, edits{"new.txt": "F:from b\n"}, "new.txt", "both add it"},
		{"file and folder", edits{"out": "F:a file\n"}, edits{"out/x.txt": "F:in a folder\n"}, "out", "a keeps a file here and b puts out/x.txt under it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := gitRepo(t, map[string]string{"f.txt": "F:" + big})
			propose(t, ws, "a", tc.a)
			propose(t, ws, "b", tc.b)
			_, err := Export(context.Background(), ws, exportRun, ExportOptions{})
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a conflict", err)
			}
			if len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != tc.path || ce.Conflicts[0].Agents != [2]string{"a", "b"} || !strings.Contains(ce.Conflicts[0].Reason, tc.reason) {
				t.Errorf("conflicts = %+v, want %s: %s", ce.Conflicts, tc.path, tc.reason)
			}
			if !strings.Contains(err.Error(), "a and b: "+tc.path+": ") {
				t.Errorf("message does not name the agents and file: %v", err)
			}
			// Each alone exports (and applies).
			for _, agent := range []string{"a", "b"} {
				if _, err := Export(context.Background(), ws, exportRun, ExportOptions{Agents: []string{agent}}); err != nil {
					t.Errorf("export of %s alone: %v", agent, err)
				}
			}
		})
	}
}

// What is left out or refused: applied and rejected proposals (left out, or refused when
// named), an unknown agent, a run without proposals, one that no longer applies.
func TestExportSelection(t *testing.T) {
	ws := gitRepo(t, map[string]string{"f.txt": "F:one\ntwo\n", "g.txt": "F:g\n"})
	a := propose(t, ws, "a", edits{"f.txt": "F:one\n2\n"})
	b := propose(t, ws, "b", edits{"new.txt": "F:new\n"})
	propose(t, ws, "c", edits{"g.txt": "F:G\n"})
	if _, err := Apply(context.Background(), ws, a, Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Reject(ws, b, "not needed", ""); err != nil {
		t.Fatal(err)
	}
	ex, err := Export(context.Background(), ws, exportRun, ExportOptions{})
	if err != nil || len(ex.Proposals) != 1 || ex.Proposals[0].Agent != "c" || len(ex.Skipped) != 2 {
		t.Fatalf("export = %+v, %v", ex, err)
	}
	if !strings.Contains(strings.Join(ex.Skipped, "\n"), "a (") || !strings.Contains(ex.Skipped[0]+ex.Skipped[1], "applied") {
		t.Errorf("skipped = %q", ex.Skipped)
	}
	var ref *RefusedError
	if _, err := Export(context.Background(), ws, exportRun, ExportOptions{Agents: []string{"b"}}); !errors.As(err, &ref) || !strings.Contains(err.Error(), "rejected") {
		t.Errorf("named rejected proposal: %v", err)
	}
	if _, err := Export(context.Background(), ws, exportRun, ExportOptions{Agents: []string{"zed"}}); err == nil || !strings.Contains(err.Error(), "no proposal from zed (it has proposals from") {
		t.Errorf("unknown agent: %v", err)
	}
	if _, err := Export(context.Background(), ws, "run_nope", ExportOptions{}); err == nil || !strings.Contains(err.Error(), "run run_nope has no proposals") {
		t.Errorf("unknown run: %v", err)
	}
	if _, err := Export(context.Background(), ws, exportRun, ExportOptions{Author: "no email"}); err == nil {
		t.Error("a malformed --author was accepted")
	}
	// c's file changed in the workspace since: its proposal no longer applies.
	os.WriteFile(filepath.Join(ws, "g.txt"), []byte("changed\n"), 0o644)
	if _, err := Export(context.Background(), ws, exportRun, ExportOptions{}); !errors.As(err, &ref) || !strings.Contains(err.Error(), "c's proposal does not apply to the workspace") {
		t.Errorf("stale proposal: %v", err)
	}
}

// --author signs every message; the message text cannot end the commit message early.
func TestExportAuthorAndMessage(t *testing.T) {
	ws := gitRepo(t, map[string]string{"f.txt": "F:one\n"})
	propose(t, ws, "a", edits{"f.txt": "F:uno\n"})
	ex, err := Export(context.Background(), ws, exportRun, ExportOptions{Author: "CI Bot <ci@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ex.Patch), "\nFrom: CI Bot <ci@example.com>\n") || !strings.Contains(string(ex.Patch), "Subject: [PATCH] a: Work of a\n") {
		t.Errorf("headers:\n%s", ex.Patch)
	}
	if got := messageText("keep\n---\nFrom me\ndiff --git a b"); got != "keep\n ---\n From me\n diff --git a b" {
		t.Errorf("messageText = %q", got)
	}
}

// A proposal whose file the person changed since, near its lines: its check merges it with the
// workspace, and the export carries that merge (its diff made again against the workspace), not
// the diff as made, whose context no longer matches and which git apply would refuse.
func TestExportOfAMergedProposal(t *testing.T) {
	big := lines(1, 30, "line %d\n")
	ws := gitRepo(t, map[string]string{"f.txt": "F:" + big, "g.txt": "F:g\n"})
	propose(t, ws, "a", edits{"f.txt": "F:" + setLine(big, 25, "a's line 25"), "g.txt": "F:G\n"})
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(setLine(big, 22, "the person's line 22")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, ws, "git", "commit", "-q", "-am", "the person's edit"); err != nil {
		t.Fatalf("commit: %v %s", err, out)
	}
	clone := t.TempDir()
	if out, err := run(t, clone, "git", "clone", "-q", ws, "."); err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	if _, err := exportOf(t, ws, exportRun, clone); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, filepath.Join(clone, "f.txt")), setLine(setLine(big, 22, "the person's line 22"), 25, "a's line 25"); got != want {
		t.Errorf("f.txt after the export:\n%s\nwant\n%s", got, want)
	}
	if got := readFile(t, filepath.Join(clone, "g.txt")); got != "G\n" {
		t.Errorf("g.txt after the export: %q", got)
	}
}
