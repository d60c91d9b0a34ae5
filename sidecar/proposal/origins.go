package proposal

// Where each line of a workspace file came from, as far as the apply ledger can tell: the
// ledger's entries for the file are replayed oldest first, each line carrying the entry that
// wrote it through every later version by a line diff (as `git blame` carries lines through
// commits), and finally into the text the editor holds now.
//
// What is approximate: a line an agent wrote and a person then edited is the person's (it no
// longer has an origin); a moved line loses its origin; where lines repeat ("}", blank lines)
// the diff may credit a neighbouring copy; lines a revert puts back show no origin; and edits
// made between two applies are seen only by comparing each apply's "before" with the previous
// "after" (the ledger keeps no versions between them).

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// LineOrigin is a run of lines (1-based Start, Count lines) that one apply wrote.
type LineOrigin struct {
	Start    int     `json:"start"`
	Count    int     `json:"count"`
	Entry    string  `json:"entry"` // the ledger entry
	At       string  `json:"at"`
	RunID    string  `json:"runId,omitempty"`
	AgentID  string  `json:"agentId,omitempty"`
	Proposal string  `json:"proposal,omitempty"`
	Notes    string  `json:"notes,omitempty"`
	Origin   *Origin `json:"origin,omitempty"`
	Merged   bool    `json:"merged,omitempty"`
}

// LineOrigins attributes the lines of file (workspace-relative) as current holds it (nil: as it
// is on disk) to the applies that wrote them. Lines of no apply are left out.
func LineOrigins(workspace, file string, current []byte) ([]LineOrigin, error) {
	name, err := safepath.Clean(file, safepath.Lexical)
	if err != nil {
		return nil, err
	}
	lg, lerr := ReadLedger(workspace)
	if lg == nil {
		return nil, lerr
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if current == nil {
		d := newDirs(root)
		cur, err := readSideAt(d, name)
		d.close()
		if err != nil {
			return nil, err
		}
		current = cur.data
	}
	lines, attr, err := replayLedger(root, lg, name)
	if err != nil {
		return nil, err
	}
	now := splitLines(current)
	attr = carryAttribution(lines, attr, now)
	var out []LineOrigin
	for i := 0; i < len(attr); {
		j := i + 1
		for j < len(attr) && attr[j] == attr[i] {
			j++
		}
		if attr[i] >= 0 {
			e := lg.Entries[attr[i]]
			out = append(out, LineOrigin{Start: i + 1, Count: j - i, Entry: e.ID, At: e.At, RunID: e.RunID, AgentID: e.AgentID,
				Proposal: e.Proposal, Notes: e.Notes, Origin: e.Origin, Merged: e.Merged})
		}
		i = j
	}
	return out, lerr
}

// replayLedger returns the file's lines after the last entry that touched it, each with the
// index of the entry that wrote it (-1: none).
func replayLedger(root *os.Root, lg *Ledger, name string) ([]string, []int, error) {
	var lines []string
	var attr []int
	objs := openObjects(root)
	defer objs.close()
	for i, e := range lg.Entries {
		for _, f := range e.Files {
			if f.Path != name {
				continue
			}
			before, err := objs.read(f.Before)
			var after side
			if err == nil {
				after, err = objs.read(f.After)
			}
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					err = fmt.Errorf("ledger entry %s: %w", e.ID, err)
				}
				return nil, nil, err
			}
			if !before.text() || !after.text() {
				lines, attr = nil, nil // a binary version or a symlink: nothing to carry
				continue
			}
			bl, al := splitLines(before.data), splitLines(after.data)
			attr = carryAttribution(lines, attr, bl)
			next := make([]int, len(al))
			for k := range next {
				next[k] = -1
			}
			for _, ed := range diffLines(bl, al) {
				switch {
				case ed.kind == ' ':
					next[ed.b] = attr[ed.a]
				case ed.kind == '+' && e.Kind == "apply":
					next[ed.b] = i
				}
			}
			lines, attr = al, next
		}
	}
	return lines, attr, nil
}

// carryAttribution moves each line's attribution from one version of a file to the next:
// lines the diff keeps keep theirs, the others have none.
func carryAttribution(from []string, attr []int, to []string) []int {
	out := make([]int, len(to))
	for i := range out {
		out[i] = -1
	}
	if len(attr) == 0 {
		return out
	}
	for _, e := range diffLines(from, to) {
		if e.kind == ' ' {
			out[e.b] = attr[e.a]
		}
	}
	return out
}

// originNames names the applies that wrote lines [start, end) (0-based) of a file: "w1 (run
// r1)", once each.
func originNames(origins []LineOrigin, start, end int) []string {
	if end <= start {
		start, end = max(start-1, 0), start+1 // an insertion: the lines around it
	}
	var out []string
	for _, o := range origins {
		if o.Start-1 < end && start < o.Start-1+o.Count && o.AgentID != "" {
			n := fmt.Sprintf("%s (run %s)", o.AgentID, o.RunID)
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}
