package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
	"github.com/agentcanvas/agentcanvas/sidecar/termsafe"
	"github.com/agentcanvas/agentcanvas/sidecar/transcript"
)

// hostile is text an agent or a file could hold to act on the person's terminal: a cursor
// move and erase that hide a line, an OSC 52 clipboard write, a window title, a raw 8-bit CSI
// byte, a C1 CSI code point, a bidi override, conceal, and a carriage return.
const hostile = "\x1b[1A\x1b[2Khidden\x1b]52;c;ZWNobyBoaQ==\x07 \x1b]0;title\x1b\\ \x9b31m \u009b32m \u202eevil \x1b[8mconceal\x1b[0m safe\rEVIL"

// mustBeTerminalSafe fails when s holds anything a terminal would act on, and checks that
// the escapes are there to read.
func mustBeTerminalSafe(t *testing.T, what, s string, visible ...string) {
	t.Helper()
	if !termsafe.Safe(s) {
		t.Errorf("%s reaches the terminal raw: %q", what, s)
	}
	for _, v := range visible {
		if !strings.Contains(s, v) {
			t.Errorf("%s does not show %s:\n%s", what, v, s)
		}
	}
}

// hostileProposal makes a workspace with a proposal whose agent id, notes and file content
// carry hostile text.
func hostileProposal(t *testing.T) (ws, pj string) {
	t.Helper()
	ws = t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	agent := "coder\x1b]0;pwned\x07"
	code, out, errs := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", agent, "a.txt")
	if code != exitOK {
		t.Fatalf("prepare: %s", errs)
	}
	var paths map[string]string
	json.Unmarshal([]byte(out), &paths)
	os.WriteFile(filepath.Join(paths["workDir"], "a.txt"), []byte("one\n"+hostile+"\nthree\n"), 0o644)
	if code, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", agent, "--notes", "notes "+hostile); code != exitOK {
		t.Fatalf("create: %s", errs)
	}
	return ws, filepath.Join(filepath.Dir(paths["workDir"]), "proposal", "proposal.json")
}

// Every printer of agent or file text shows escapes, C1 controls and bidi characters as
// escapes a person reads: proposal review (text and JSON), list, interdiff and export on a
// terminal, run show (text and JSON), and errors on stderr.
func TestPrintersMakeEscapesVisible(t *testing.T) {
	ws, pj := hostileProposal(t)
	visible := []string{`\x1b[1A\x1b[2K`, `\x1b]52;c;`, `\x9b31m`, `\u009b32m`, `\u202e`, `\x1b[8m`, `\r`}
	_, out, errs := runCLI(t, "proposal", "review", "--workspace", ws, pj)
	mustBeTerminalSafe(t, "proposal review", out+errs, visible...)
	mustBeTerminalSafe(t, "proposal review's agent", out, `coder\x1b]0;pwned\x07`)
	_, out, errs = runCLI(t, "proposal", "review", "--json", "--workspace", ws, pj)
	mustBeTerminalSafe(t, "proposal review --json", out+errs)
	var rv proposal.Review
	if err := json.Unmarshal([]byte(out), &rv); err != nil || !strings.Contains(rv.Files[0].Hunks[0].Lines[2].Text, "\u202eevil") {
		t.Errorf("review --json no longer means the same: %v", err)
	}
	_, out, errs = runCLI(t, "proposal", "list", "--workspace", ws)
	mustBeTerminalSafe(t, "proposal list", out+errs, `coder\x1b]0;pwned\x07`)
	_, out, errs = runCLI(t, "proposal", "list", "--json", "--workspace", ws)
	mustBeTerminalSafe(t, "proposal list --json", out+errs)
	_, _, errs = runCLI(t, "proposal", "review", "--workspace", ws, "nope\x1b]0;x\x07.json")
	mustBeTerminalSafe(t, "an error on stderr", errs, `nope\x1b]0;x\x07.json`)

	if got := terminalText(&strings.Builder{}, hostile); got != hostile {
		t.Errorf("a patch piped elsewhere than a terminal must stay byte for byte")
	}
	tm := openTerminal(t, 200, 50)
	if code := run([]string{"proposal", "export", "--workspace", ws, "r1"}, strings.NewReader(""), tm.slave, tm.slave); code != exitOK {
		t.Fatalf("export exit %d", code)
	}
	mustBeTerminalSafe(t, "proposal export on a terminal", string(tm.close()), `\u202e`)

	tw := transcript.NewWriter(ws, "run_x")
	tw.Append(transcript.Turn{InteractionID: "i1", Agent: "coder", From: "engine", Round: 1, Backend: "command", Started: time.Now(), Status: "completed",
		Prompt: "do it", Reply: "done " + hostile, Stderr: []string{"warn " + hostile}})
	_, out, errs = runCLI(t, "run", "show", "--workspace", ws, "run_x")
	mustBeTerminalSafe(t, "run show's timeline", out+errs, `\x1b[1A`)
	_, out, errs = runCLI(t, "run", "show", "--workspace", ws, "run_x", "coder")
	// (the transcript is JSON: a raw 0x9b byte was stored as U+FFFD already)
	mustBeTerminalSafe(t, "run show of an agent", out+errs, `\x1b[1A\x1b[2K`, `\x1b]52;c;`, `\u009b32m`, `\u202e`, `\r`)
	_, out, errs = runCLI(t, "run", "show", "--json", "--workspace", ws, "run_x")
	mustBeTerminalSafe(t, "run show --json", out+errs)
}

// The text review numbers every line as the file has it before and after, the number after
// being what request-changes --comment PATH:LINE takes; a long run of blanks that would push
// text out of sight, and an overlong line, are said rather than hidden.
func TestReviewNumbersLines(t *testing.T) {
	ws := t.TempDir()
	lines := make([]string, 20)
	for i := range lines {
		lines[i] = "line " + string(rune('a'+i))
	}
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	_, out, _ := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "coder", "a.txt")
	var paths map[string]string
	json.Unmarshal([]byte(out), &paths)
	edited := append([]string{}, lines...)
	edited[9] = "x := 1" + strings.Repeat(" ", 200) + "; evil()"
	edited = append(edited[:12], append([]string{"inserted " + strings.Repeat("y", 600)}, edited[12:]...)...)
	os.WriteFile(filepath.Join(paths["workDir"], "a.txt"), []byte(strings.Join(edited, "\n")+"\n"), 0o644)
	runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "coder")
	pj := filepath.Join(filepath.Dir(paths["workDir"]), "proposal", "proposal.json")
	_, out, _ = runCLI(t, "proposal", "review", "--workspace", ws, pj)
	for _, re := range []string{`(?m)^ 7  7  line g$`, `(?m)^10    -line j$`, `(?m)^   10 \+x := 1 ⟨200 blanks⟩ ; evil\(\)$`, `(?m)^   13 \+inserted y+ ⟨… \d+ more characters`, `(?m)^13 14  line m$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the review lacks %s:\n%s", re, out)
		}
	}
	if code, _, errs := runCLI(t, "proposal", "comment", "--workspace", ws, pj, "a.txt:13=shorter, please"); code != exitOK {
		t.Errorf("a comment on the line the review numbers 13: %s", errs)
	}
}

// A proposal whose tests failed says so on the review's first line, with the command, the
// exit status and the failing lines; held files come next, and the apply command names them.
func TestReviewSaysTestsFailedFirst(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644)
	_, out, _ := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "coder", "a.txt")
	var paths map[string]string
	json.Unmarshal([]byte(out), &paths)
	os.WriteFile(filepath.Join(paths["workDir"], "a.txt"), []byte("two\n"), 0o644)
	os.MkdirAll(filepath.Join(paths["workDir"], ".vscode"), 0o755)
	os.WriteFile(filepath.Join(paths["workDir"], ".vscode", "tasks.json"), []byte("{}\n"), 0o644)
	_, _, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "coder")
	if !strings.Contains(errs, "held: .vscode/tasks.json: editor configuration") {
		t.Errorf("create does not say what is held: %s", errs)
	}
	proposal.RecordTest(ws, "r1", "coder", proposal.TestResult{Kind: proposal.TestKindTest, Command: []string{"npm", "test"}, ExitCode: 1}, []byte("ok 1 - a\nnot ok 2 - adds\n"))
	pj := filepath.Join(filepath.Dir(paths["workDir"]), "proposal", "proposal.json")
	_, out, _ = runCLI(t, "proposal", "review", "--workspace", ws, pj)
	first, rest, _ := strings.Cut(out, "\n")
	if first != "✗ TESTS FAILED: npm test exited 1" || !strings.Contains(rest, "    not ok 2 - adds") {
		t.Errorf("review:\n%s", out)
	}
	if !strings.Contains(rest, "⚠ HELD: changes how things run") || !strings.Contains(rest, "--confirm-control .vscode/tasks.json") {
		t.Errorf("review does not name the held file and how to confirm it:\n%s", out)
	}
	code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, pj)
	if code != exitFail || !strings.Contains(errs, "held: .vscode/tasks.json") || !strings.Contains(errs, "--confirm-control .vscode/tasks.json") {
		t.Errorf("apply without confirming: exit %d %s", code, errs)
	}
	if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, "--confirm-control", ".vscode/tasks.json", pj); code != exitOK {
		t.Errorf("apply with the file confirmed: exit %d %s", code, errs)
	}
}

// A file name carrying escape sequences or a C1 control never reaches the terminal raw: create
// refuses it, naming it escaped.
func TestEscapesInAFileNameAreShownEscaped(t *testing.T) {
	for _, name := range []string{"a\x1b]0;t\x07.txt", "b\u009b31m.txt", "c\u202etxt.md"} {
		ws := t.TempDir()
		os.WriteFile(filepath.Join(ws, "x.txt"), []byte("x\n"), 0o644)
		_, out, _ := runCLI(t, "sandbox", "prepare", "--workspace", ws, "--run", "r1", "--agent", "coder", "x.txt")
		var paths map[string]string
		json.Unmarshal([]byte(out), &paths)
		os.WriteFile(filepath.Join(paths["workDir"], name), []byte("x\n"), 0o644)
		code, out, errs := runCLI(t, "proposal", "create", "--workspace", ws, "--run", "r1", "--agent", "coder")
		if code != exitFail {
			t.Errorf("%q: create exit %d", name, code)
		}
		mustBeTerminalSafe(t, "create's refusal of "+strings.ReplaceAll(name, "\x1b", "ESC"), out+errs, "cannot be proposed")
	}
}
