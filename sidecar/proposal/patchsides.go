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
// patch applied to that; a link's target as its text, a binary file's content left out): of
// the file at only, or of every file when only is "".
func GetPatchSides(workspace, ref string, rules safepath.Rules, only string) (*PatchSides, error) {
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
	files, err := patchedFiles(root, l.Patch, rules)
	if err != nil {
		return nil, err
	}
	out := &PatchSides{Patch: PatchDigest(l.Patch), Sides: []InterdiffSide{}}
	for _, f := range files {
		if f.shown && (only == "" || f.path == only) {
			out.Sides = append(out.Sides, interdiffSide(f.path, f.old, f.new))
		}
	}
	return out, nil
}

// patchedFile is one path a patch touches: as the agent folder's input/ has it and as the
// patch makes it. shown is false for the old name of a rename (its side is the new name's).
type patchedFile struct {
	path     string
	old, new side
	shown    bool
}

// patchedFiles applies patch to the input/ of the agent folder at root, as an apply plans it,
// and returns every path it touches.
func patchedFiles(root *os.Root, patch []byte, rules safepath.Rules) ([]patchedFile, error) {
	input, err := root.OpenRoot("input")
	if err != nil {
		return nil, fmt.Errorf("the proposal's input/ cannot be read: %w", err)
	}
	defer input.Close()
	d := newDirs(input)
	defer d.close()
	pl, probs := buildPlan(d, patch, Selection{}, rules, 0)
	if len(probs) > 0 {
		return nil, fmt.Errorf("the patch does not apply to the version it was made from (input/): %s", describeProblems(probs))
	}
	written := map[string]write{}
	for _, w := range pl.writes {
		written[w.path] = w
	}
	var out []patchedFile
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
			switch {
			case w.kind == kindSymlink:
				now.mode = modeSymlink
			case w.exec:
				now.mode = modeExec
			}
		}
		out = append(out, patchedFile{path: f.Path, old: old, new: now, shown: true})
		if from != f.Path && f.Status == "renamed" {
			out = append(out, patchedFile{path: from, old: old}) // gone under its old name
		}
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
