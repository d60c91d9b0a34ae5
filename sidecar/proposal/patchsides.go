package proposal

import (
	"fmt"
	"os"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// PatchSides is each file of a proposal's patch as a side-by-side review shows it: the version
// the proposal was made from (its sandbox's input/) and what the patch makes of it — what an
// apply onto that version writes. Never work/ as it is now: the worker may have changed it
// since the patch was made (a later turn runs there while the person reviews), and a link
// there would show the file it points at instead of the link the patch makes.
type PatchSides struct {
	// Patch is the digest of the patch the sides are made from (Review.PatchDigest): an
	// apply sent with it as reviewed applies exactly this.
	Patch string          `json:"patch"`
	Sides []InterdiffSide `json:"sides"`
}

// GetPatchSides makes the sides of ref's patch (each file's "old" from input/, its "new" the
// patch applied to that; a link's target as its text, a binary file's content left out).
func GetPatchSides(workspace, ref string, rules safepath.Rules) (*PatchSides, error) {
	l, err := Load(workspace, ref)
	if err != nil {
		return nil, err
	}
	if l.Proposal == nil || l.AgentDir == "" {
		return nil, fmt.Errorf("%s is a bare patch: it has no sandbox to show it against", ref)
	}
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	input, err := root.OpenRoot("input")
	if err != nil {
		return nil, fmt.Errorf("the proposal's input/ cannot be read: %w", err)
	}
	defer input.Close()
	d := newDirs(input)
	defer d.close()
	pl, probs := buildPlan(d, l.Patch, Selection{}, rules, 0)
	if len(probs) > 0 {
		return nil, fmt.Errorf("the patch does not apply to the version it was made from (input/): %s", describeProblems(probs))
	}
	out := &PatchSides{Patch: PatchDigest(l.Patch), Sides: []InterdiffSide{}}
	written := map[string]write{}
	for _, w := range pl.writes {
		written[w.path] = w
	}
	for _, f := range pl.files {
		from := f.Path
		if f.OldPath != "" {
			from = f.OldPath
		}
		var old side
		if f.Status != "added" {
			if old, err = readSideAt(d, from); err != nil {
				return nil, err
			}
		}
		var now side
		if w, ok := written[f.Path]; ok {
			now = side{exists: true, mode: modeFile, data: w.data}
			if w.kind == kindSymlink {
				now.mode = modeSymlink
			}
		}
		out.Sides = append(out.Sides, interdiffSide(f.Path, old, now))
	}
	return out, nil
}

// describeProblems is problems in one line: "a.txt: why; b.txt: why".
func describeProblems(probs []Problem) string {
	parts := make([]string, 0, len(probs))
	for _, p := range probs {
		if p.Path != "" {
			parts = append(parts, ShowName(p.Path)+": "+p.Reason)
		} else {
			parts = append(parts, p.Reason)
		}
	}
	return strings.Join(parts, "; ")
}
