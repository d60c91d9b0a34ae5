//go:build unix

package main

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// Two runs of one flow with auto-apply, from separate processes started together in a fresh
// workspace: neither trips over the other's folders, every proposal_applied has its ledger
// entry and its files as it wrote them (unless a later entry changed them), and every
// proposal that was not applied is held with a reason.
func TestTwoRunsAutoApplyAtOnce(t *testing.T) {
	const trials = 3
	for i := 0; i < trials; i++ {
		ws, file := runWorkspace(t, "manager-worker.yaml")
		src, _ := os.ReadFile(file)
		os.WriteFile(file, []byte(strings.Replace(string(src), "\nagents:", "\npolicy: {autoApply: true}\n\nagents:", 1)), 0o644)
		args := []string{"run", "--json", "--dry-run", "--non-interactive", file}
		gate := filepath.Join(t.TempDir(), "gate")
		var outs [2]bytes.Buffer
		var errs [2]bytes.Buffer
		var procs [2]interface{ Wait() error }
		for k := range procs {
			c := cli([]string{"AGENTCANVAS_TEST_GATE=" + gate}, args...)
			c.Dir = ws
			c.Stdout, c.Stderr = &outs[k], &errs[k]
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			procs[k] = c
		}
		os.WriteFile(gate, nil, 0o644)
		applied, held := 0, 0
		for k, p := range procs {
			if err := p.Wait(); err != nil {
				t.Fatalf("trial %d: run %d: %v\n%s", i, k, err, errs[k].String())
			}
			if strings.Contains(errs[k].String(), "file exists") {
				t.Fatalf("trial %d: run %d raced on a folder:\n%s", i, k, errs[k].String())
			}
			sc := bufio.NewScanner(&outs[k])
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var ev map[string]any
				json.Unmarshal(sc.Bytes(), &ev)
				switch ev["event"] {
				case "proposal_applied":
					applied++
				case "proposal_held":
					held++
					if r, _ := ev["reason"].(string); r == "" {
						t.Errorf("trial %d: a proposal was held without a reason: %s", i, sc.Bytes())
					}
				}
			}
		}
		if applied == 0 {
			t.Fatalf("trial %d: nothing was applied", i)
		}
		checkLedgerMatchesWorkspace(t, ws, applied)
		t.Logf("trial %d: %d proposals applied, %d held (told why)", i, applied, held)
	}
}

// checkLedgerMatchesWorkspace: as many apply entries as applies, and every file is as the
// last entry that touched it left it.
func checkLedgerMatchesWorkspace(t *testing.T, ws string, applied int) {
	t.Helper()
	code, _, out, errs := runProc(t, nil, "proposal", "ledger", "--workspace", ws, "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	var lg struct {
		Entries []struct {
			Kind  string `json:"kind"`
			Files []struct {
				Path  string `json:"path"`
				After *struct {
					OID string `json:"oid"`
				} `json:"after"`
			} `json:"files"`
		} `json:"entries"`
	}
	json.Unmarshal([]byte(out), &lg)
	if len(lg.Entries) != applied {
		t.Fatalf("%d proposal_applied events, %d ledger entries", applied, len(lg.Entries))
	}
	last := map[string]string{}
	for _, e := range lg.Entries {
		for _, f := range e.Files {
			last[f.Path] = ""
			if f.After != nil {
				last[f.Path] = f.After.OID
			}
		}
	}
	// Every line an apply added is still there (a later apply of the same file would have
	// had to merge with it, not overwrite it).
	for _, e := range lg.Entries {
		for _, f := range e.Files {
			if f.After == nil {
				continue
			}
			after, err := proposal.ReadLedgerObject(ws, &proposal.LedgerBlob{OID: f.After.OID})
			if err != nil {
				t.Fatal(err)
			}
			now, _ := os.ReadFile(filepath.Join(ws, f.Path))
			for _, line := range strings.Split(string(after), "\n") {
				if strings.HasPrefix(line, "- Edited by") && !strings.Contains(string(now), line+"\n") {
					t.Errorf("%s lost %q, which an apply wrote", f.Path, line)
				}
			}
		}
	}
	for p, oid := range last {
		b, err := os.ReadFile(filepath.Join(ws, p))
		got := ""
		if err == nil {
			h := sha1.New()
			fmt.Fprintf(h, "blob %d\x00", len(b))
			h.Write(b)
			got = hex.EncodeToString(h.Sum(nil))
		}
		if got != oid {
			t.Errorf("%s is not as the last apply left it: a lost update", p)
		}
	}
}
