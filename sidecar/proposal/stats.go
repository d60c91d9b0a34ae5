package proposal

import (
	"fmt"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// FileStat is one file of a proposal's patch with its line counts, as `git diff --numstat`
// gives them (a binary file counts no lines).
type FileStat struct {
	Path    string `json:"path"`
	Status  string `json:"status"` // added, modified, deleted, renamed, copied
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// Stats loads ref and counts its patch's lines per file. The proposal is nil for a bare
// patch.
func Stats(workspace, ref string) (*Proposal, []FileStat, error) {
	l, err := Load(workspace, ref)
	if err != nil {
		return nil, nil, err
	}
	files, probs := parsePatch(l.Patch, safepath.Rules{}, 0)
	if len(probs) > 0 {
		return l.Proposal, nil, fmt.Errorf("%s: %s", l.PatchPath, probs[0])
	}
	out := make([]FileStat, 0, len(files))
	for _, f := range files {
		rf := reviewFile(f)
		out = append(out, FileStat{Path: rf.Path, Status: rf.Status, Added: rf.Added, Deleted: rf.Deleted, Binary: rf.Binary})
	}
	return l.Proposal, out, nil
}
