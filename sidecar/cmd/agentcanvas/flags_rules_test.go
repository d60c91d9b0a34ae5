package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --allow and --block on sandbox prepare, proposal apply and review, and validate: refusals
// name the file, the rule and the flag; a bad flag value is a usage error naming the flag.
func TestFolderFlags(t *testing.T) {
	ws := t.TempDir()
	for p, text := range map[string]string{"src/a.txt": "one\n", "src/gen/g.txt": "g\n", "README.md": "readme\n"} {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(ws, p), []byte(text), 0o644)
	}
	prepare := func(args ...string) (int, string, string) {
		return runCLI(t, append([]string{"sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "w"}, args...)...)
	}
	code, _, errs := prepare("--allow", "src", "README.md")
	if code != exitFail || !strings.Contains(errs, "README.md: outside the allowed folders [src] (--allow)") {
		t.Errorf("prepare outside --allow: %d %s", code, errs)
	}
	code, _, errs = prepare("--block", "src/gen", "src/gen/g.txt")
	if code != exitFail || !strings.Contains(errs, "src/gen/g.txt: in the blocked folder src/gen (--block)") {
		t.Errorf("prepare in --block: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentcanvas")); err == nil {
		t.Fatal("a refused prepare created .agentcanvas")
	}
	for _, bad := range [][]string{{"--allow", "/etc"}, {"--allow", "../x"}, {"--block", "a/../b"}} {
		code, _, errs := prepare(append(bad, "src")...)
		if code != exitUsage || !strings.Contains(errs, bad[0]+` "`+bad[1]+`"`) {
			t.Errorf("prepare %v: %d %s", bad, code, errs)
		}
	}
	// A folder is copied without the blocked folder inside it.
	code, out, errs := prepare("--allow", "src", "--block", "gen", "src")
	if code != exitOK {
		t.Fatalf("prepare: %d %s", code, errs)
	}
	var paths map[string]string
	json.Unmarshal([]byte(out), &paths)
	if _, err := os.Stat(filepath.Join(paths["workDir"], "src", "gen")); err == nil {
		t.Error("the blocked folder was copied")
	}
	os.WriteFile(filepath.Join(paths["workDir"], "src", "a.txt"), []byte("ONE\n"), 0o644)
	os.WriteFile(filepath.Join(paths["workDir"], "NEWS.md"), []byte("news\n"), 0o644)
	if code, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "w"); code != exitOK {
		t.Fatalf("create: %d %s", code, errs)
	}
	prop := filepath.Join(paths["proposalDir"], "proposal.json")
	code, _, errs = runCLI(t, "proposal", "apply", "--workspace", ws, "--allow", "src", prop)
	if code != exitFail || !strings.Contains(errs, "refused: NEWS.md: outside the allowed folders [src] (--allow)") {
		t.Errorf("apply outside --allow: %d %s", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src", "a.txt")); string(b) != "one\n" {
		t.Fatal("a refused apply changed the workspace")
	}
	code, out, _ = runCLI(t, "proposal", "review", "--json", "--workspace", ws, "--allow", "src", prop)
	if code != exitOK || !strings.Contains(out, `"applicable": false`) || !strings.Contains(out, "outside the allowed folders [src] (--allow)") {
		t.Errorf("review with --allow: %d %s", code, out)
	}
	if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, "--allow", "/abs", prop); code != exitUsage || !strings.Contains(errs, `--allow "/abs"`) {
		t.Errorf("apply --allow /abs: %d %s", code, errs)
	}
	// Without the flags, as before.
	if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, "--check", prop); code != exitOK {
		t.Errorf("apply --check without flags: %d %s", code, errs)
	}
}

// validate and run: --allow refuses a flow whose agents' files are outside (naming the flag); --auto-apply
// caps the flow's policy.autoApply; a bad value is a usage error.
func TestRunLimitFlags(t *testing.T) {
	ws, file := runWorkspace(t, "manager-worker.yaml")
	src, _ := os.ReadFile(file)
	os.WriteFile(file, []byte(strings.Replace(string(src), "\nagents:", "\npolicy: {autoApply: true}\n\nagents:", 1)), 0o644)

	code, out, errs := runCLI(t, "run", "--dry-run", "--non-interactive", "--allow", "docs", file)
	if code != exitFail || !strings.Contains(errs, `agent file "src/parser.test.ts" is refused: outside the allowed folders [docs] (--allow)`) || out != "" {
		t.Errorf("run --allow docs: %d %s", code, errs)
	}
	if code, out, _ := runCLI(t, "validate", "--allow", "docs", file); code != exitFail || !strings.Contains(out, "outside the allowed folders [docs] (--allow)") {
		t.Errorf("validate --allow docs: %d %s", code, out)
	}
	if code, _, errs := runCLI(t, "validate", file); code != exitOK {
		t.Errorf("validate without flags: %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "run", "--dry-run", "--auto-apply", "sometimes", file); code != exitUsage || !strings.Contains(errs, `"sometimes" is not one of [off whenClean flow]`) {
		t.Errorf("run --auto-apply sometimes: %d %s", code, errs)
	}
	for _, c := range []struct {
		args  []string
		event string
		field string
	}{
		{[]string{"--auto-apply", "off"}, "proposal_held", "--auto-apply is off"},
		{[]string{"--allow", "src"}, "proposal_held", "the proposal does not apply cleanly"},
		{nil, "proposal_applied", "dry-run-coder.md"},
	} {
		code, out, errs := runCLI(t, append(append([]string{"run", "--json", "--dry-run", "--non-interactive"}, c.args...), file)...)
		if code != exitOK {
			t.Fatalf("run %v: %d %s", c.args, code, errs)
		}
		found := false
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"event":"`+c.event+`"`) && strings.Contains(sc.Text(), c.field) {
				found = true
			}
		}
		if !found {
			t.Errorf("run %v: no %s event with %q", c.args, c.event, c.field)
		}
		_, err := os.Stat(filepath.Join(ws, "dry-run-coder.md"))
		if applied := err == nil; applied != (c.event == "proposal_applied") {
			t.Errorf("run %v: applied = %v", c.args, applied)
		}
	}
}
