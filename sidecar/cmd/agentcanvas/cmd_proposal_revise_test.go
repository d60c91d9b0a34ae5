package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/reviewfixture"
)

// The review loop from a terminal, after the run has ended: comments are kept with the
// proposal and listed, request-changes sends them to the worker (a real process reading
// them from its prompt), the revision it makes is shown by interdiff, and a comments file
// with a bad line names the file and the line and runs nothing.
func TestRequestChangesFromTheTerminal(t *testing.T) {
	ws := reviewfixture.Workspace(t, map[string]string{
		"greet.txt": "hi\n",
		"agents/coder.sh": `prompt=$(cat)
if grep -q "A reviewer read revision" <<<"$prompt"; then
  grep -q '\[c1\] greet.txt line 1: use a comma, then world' <<<"$prompt" && printf 'hello, world\n' > greet.txt
  grep -q '\[c2\] greet.txt: end with a newline' <<<"$prompt" && printf 'ANSWER c2: it does\n'
  printf 'ANSWER c1: done\n'
  exit 0
fi
printf 'hello\n' > greet.txt
echo changed
`,
		"flows/fix.yaml": reviewfixture.Flow("greet.txt"),
	})
	code, out, errs := runCLI(t, "run", "--json", "--workspace", ws, filepath.Join(ws, "flows", "fix.yaml"))
	if code != exitOK {
		t.Fatalf("run: %d\n%s\n%s", code, out, errs)
	}
	var ref string
	for _, line := range strings.Split(out, "\n") {
		var raw map[string]any
		if json.Unmarshal([]byte(line), &raw) == nil && raw["event"] == "proposal_created" {
			ref, _ = raw["proposal"].(string)
		}
	}
	if ref == "" {
		t.Fatalf("no proposal_created event:\n%s", out)
	}

	if code, _, errs := runCLI(t, "proposal", "comment", "--workspace", ws, ref, "greet.txt:1=use a comma, then world"); code != exitOK {
		t.Fatalf("comment: %d %s", code, errs)
	}
	code, out, _ = runCLI(t, "proposal", "comment", "--workspace", ws, ref)
	if code != exitOK || !strings.Contains(out, "revision 1\n  c1 greet.txt:1 use a comma, then world  [open]") {
		t.Errorf("comment list: %d\n%s", code, out)
	}

	bad := filepath.Join(t.TempDir(), "review.txt")
	os.WriteFile(bad, []byte("# my review\ngreet.txt=end with a newline\ngreet.txt:2\n"), 0o644)
	if code, _, errs := runCLI(t, "proposal", "request-changes", "--workspace", ws, "--comments", bad, ref); code != exitUsage || !strings.Contains(errs, "review.txt:3: comment") {
		t.Errorf("a bad comments file: %d %s", code, errs)
	}
	good := filepath.Join(t.TempDir(), "review.txt")
	os.WriteFile(good, []byte("# my review\ngreet.txt=end with a newline\n"), 0o644)
	code, out, errs = runCLI(t, "proposal", "request-changes", "--workspace", ws, "--comments", good, ref)
	if code != exitOK || !strings.Contains(errs, "revision 2 of "+ref) || !strings.Contains(errs, "c2 greet.txt: it does") {
		t.Fatalf("request-changes: %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = runCLI(t, "proposal", "interdiff", "--workspace", ws, ref)
	if code != exitOK || !strings.Contains(out, "-hello\n+hello, world\n") {
		t.Errorf("interdiff: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "proposal", "comment", "--workspace", ws, ref)
	if code != exitOK || !strings.Contains(out, "revision 2\n") || !strings.Contains(out, "[answered in revision 2]\n      worker: done") {
		t.Errorf("comments after the revision:\n%s", out)
	}
	if code, _, errs := runCLI(t, "proposal", "comment", "--workspace", ws, "--delete", "c1", ref); code != exitFail || !strings.Contains(errs, "was sent to the worker with revision 2") {
		t.Errorf("deleting a sent comment: %d %s", code, errs)
	}
	// The revision shows in the list, and, once applied, in the ledger.
	if code, out, _ := runCLI(t, "proposal", "list", "--workspace", ws); code != exitOK || !strings.Contains(out, "coder (revision 2): greet.txt") {
		t.Errorf("list:\n%s", out)
	}
	if code, _, errs := runCLI(t, "proposal", "apply", "--workspace", ws, ref); code != exitOK {
		t.Fatalf("apply: %s", errs)
	}
	if code, out, _ := runCLI(t, "proposal", "ledger", "--workspace", ws); code != exitOK || !strings.Contains(out, ", revision 2): ") {
		t.Errorf("ledger:\n%s", out)
	}
}
