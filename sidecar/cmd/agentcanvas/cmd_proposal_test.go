package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestSandboxAndProposalCommands(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "src/a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("readme\n"), 0o644)

	// Usage errors exit 2.
	if code, _, _ := runCLI(t, "sandbox"); code != exitUsage {
		t.Fatalf("sandbox: %d", code)
	}
	if code, _, _ := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1"); code != exitUsage {
		t.Fatalf("missing agent: %d", code)
	}
	// A refusal exits 1 and creates nothing.
	code, _, errs := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "coder", "src/a.txt", "../etc/passwd")
	if code != exitFail || !strings.Contains(errs, "'..'") {
		t.Fatalf("refusal: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas")); err == nil {
		t.Fatal("a refused prepare created .agentcanvas")
	}
	// Prepare prints exactly {inputDir, workDir, proposalDir}.
	code, out, errs := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "custom:coder-1", "src", "README.md")
	if code != exitOK {
		t.Fatalf("prepare: %d %s", code, errs)
	}
	var paths map[string]string
	if err := json.Unmarshal([]byte(out), &paths); err != nil || len(paths) != 3 || paths["workDir"] == "" || paths["inputDir"] == "" || paths["proposalDir"] == "" {
		t.Fatalf("prepare printed %q", out)
	}
	os.WriteFile(filepath.Join(paths["workDir"], "src/a.txt"), []byte("one\nTWO\nthree\n"), 0o644)
	os.WriteFile(filepath.Join(paths["workDir"], "new.txt"), []byte("new\n"), 0o644)
	testLog := filepath.Join(t.TempDir(), "t.log")
	os.WriteFile(testLog, []byte("ok\n"), 0o644)

	// Create prints proposal.json.
	code, out, errs = runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "custom:coder-1", "--notes", "fix two", "--test-log", testLog)
	if code != exitOK {
		t.Fatalf("create: %d %s", code, errs)
	}
	var pj map[string]any
	if err := json.Unmarshal([]byte(out), &pj); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"version", "runId", "agentId", "createdAt", "base", "paths", "changedFiles", "notes"} {
		if _, ok := pj[k]; !ok {
			t.Fatalf("proposal.json lacks %s: %s", k, out)
		}
	}
	if len(pj) != 8 {
		t.Fatalf("proposal.json has extra keys: %s", out)
	}
	agentDir := filepath.Dir(paths["workDir"])
	if b, _ := os.ReadFile(filepath.Join(agentDir, "proposal/test.log")); string(b) != "ok\n" {
		t.Fatal("test.log not written")
	}
	pjFile := filepath.Join(agentDir, "proposal/proposal.json")

	// --check changes nothing and exits 0.
	code, out, errs = runCLI(t, "proposal", "apply", "--workspace", ws, "--check", pjFile)
	if code != exitOK || !strings.Contains(out, "would apply modified src/a.txt") {
		t.Fatalf("check: %d %q %s", code, out, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatal("--check changed the workspace")
	}
	// Bad selections are usage errors or refusals.
	if code, _, _ := runCLI(t, "proposal", "apply", "--workspace", ws, "--hunks", "src/a.txt:x", pjFile); code != exitUsage {
		t.Fatalf("bad --hunks: %d", code)
	}
	if code, _, _ := runCLI(t, "proposal", "apply", "--workspace", ws, "--files", "nope.txt", pjFile); code != exitFail {
		t.Fatalf("--files nope: %d", code)
	}
	// Apply one file by selection, then the rest through the agent folder.
	if code, _, errs = runCLI(t, "proposal", "apply", "--workspace", ws, "--files", "new.txt", pjFile); code != exitOK {
		t.Fatalf("apply --files: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err != nil {
		t.Fatal("new.txt not applied")
	}
	if code, _, errs = runCLI(t, "proposal", "apply", "--workspace", ws, "--hunks", "src/a.txt:1", agentDir); code != exitOK {
		t.Fatalf("apply --hunks: %d %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src/a.txt")); string(b) != "one\nTWO\nthree\n" {
		t.Fatal("hunk not applied")
	}
	// Applying again conflicts: exit 1, workspace unchanged.
	code, _, errs = runCLI(t, "proposal", "apply", "--workspace", ws, filepath.Join(agentDir, "proposal/changes.patch"))
	if code != exitFail || !strings.Contains(errs, "refused") {
		t.Fatalf("re-apply: %d %s", code, errs)
	}
	// review, reject and list.
	code, out, _ = runCLI(t, "proposal", "review", "--json", "--workspace", ws, "--record", pjFile)
	if code != exitOK || !strings.Contains(out, `"applicable": false`) {
		t.Fatalf("review: %d %s", code, out)
	}
	// Applied (in two parts), it cannot be rejected until both are reverted.
	if code, _, errs = runCLI(t, "proposal", "reject", "--workspace", ws, "--reason", "done", pjFile); code != exitFail || !strings.Contains(errs, "revert it first") {
		t.Fatalf("reject of an applied proposal: %d %s", code, errs)
	}
	for range 2 {
		if code, _, errs = runCLI(t, "proposal", "revert", "--workspace", ws, pjFile); code != exitOK {
			t.Fatalf("revert: %s", errs)
		}
	}
	if code, _, errs = runCLI(t, "proposal", "reject", "--workspace", ws, "--reason", "done", pjFile); code != exitOK {
		t.Fatalf("reject: %s", errs)
	}
	code, out, _ = runCLI(t, "proposal", "list", "--json", "--workspace", ws)
	if code != exitOK || !strings.Contains(out, `"state": "rejected"`) {
		t.Fatalf("list: %s", out)
	}
	logs, _ := filepath.Glob(filepath.Join(ws, ".agentcanvas/logs/adhoc/*.jsonl"))
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	b, _ := os.ReadFile(logs[0])
	for _, ev := range []string{"proposal_created", "proposal_applied", "proposal_reviewed", "proposal_rejected"} {
		if !strings.Contains(string(b), `"event":"`+ev+`"`) {
			t.Fatalf("no %s in %s", ev, b)
		}
	}
}
