package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func runPatternsCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPatternsJSON(t *testing.T) {
	code, out, errOut := runPatternsCmd("patterns", "--json")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var entries []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &entries); err != nil {
		t.Fatalf("not one JSON array: %v\n%s", err, out)
	}
	if len(entries) != 20 {
		t.Fatalf("%d entries, want 20", len(entries))
	}
	for i, e := range entries {
		keys := make([]string, 0, len(e))
		for k := range e {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"defaultTermination", "id", "name", "patternId", "roles", "topology"}; !slices.Equal(keys, want) {
			t.Fatalf("entry %d keys %v, want %v", i, keys, want)
		}
		var id string
		json.Unmarshal(e["id"], &id)
		if want := fmt.Sprintf("P%02d", i+1); id != want {
			t.Errorf("entry %d id %q, want %q", i, id, want)
		}
	}
	var p05 struct {
		PatternID string `json:"patternId"`
		Roles     []struct {
			Role, Kind, SystemType string
			Count, MinCount        int
		} `json:"roles"`
		DefaultTermination struct {
			Any []struct {
				Type   string `json:"type"`
				Rounds int    `json:"rounds"`
				Ms     int    `json:"ms"`
			} `json:"any"`
		} `json:"defaultTermination"`
	}
	var raw []json.RawMessage
	json.Unmarshal([]byte(out), &raw)
	if err := json.Unmarshal(raw[4], &p05); err != nil {
		t.Fatal(err)
	}
	if p05.PatternID != "debate_judge" || len(p05.Roles) != 2 || p05.Roles[1].SystemType != "judge" || p05.Roles[0].Count != 2 {
		t.Errorf("P05 = %+v", p05)
	}
	if got := p05.DefaultTermination.Any; len(got) != 3 || got[0].Rounds != 3 || got[1].Type != "judge_decision" || got[2].Ms != 600000 {
		t.Errorf("P05 termination = %+v", got)
	}
}

func TestPatternsTable(t *testing.T) {
	code, out, _ := runPatternsCmd("patterns")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "DEFAULT TERMINATION") {
		t.Errorf("header %q", lines[0])
	}
	for i := 1; i <= 20; i++ {
		if !strings.HasPrefix(lines[i], fmt.Sprintf("P%02d ", i)) {
			t.Errorf("line %d = %q", i, lines[i])
		}
	}
	if !strings.Contains(out, "debater×2, judge*") || !strings.Contains(out, "any(max_rounds=3, judge_decision, timeout_ms=600000)") {
		t.Errorf("P05 row missing roles or termination:\n%s", out)
	}
}

func TestPatternsUsage(t *testing.T) {
	if code, _, errOut := runPatternsCmd("patterns", "--yaml"); code != exitUsage || !strings.Contains(errOut, "usage: agentcanvas patterns") {
		t.Errorf("bad flag: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runPatternsCmd("patterns", "extra"); code != exitUsage {
		t.Errorf("extra argument: exit %d", code)
	}
	if code, _, _ := runPatternsCmd("patterns", "-h"); code != exitOK {
		t.Errorf("-h: exit %d", code)
	}
}
