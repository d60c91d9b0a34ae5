package proposal

import (
	"os"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// reviewFacts adds to a review what a person must see before applying: the held files (a
// control file, a name that looks like another), the last tests' results, and which patch
// the review showed (its digest, a warning when it is not the one the proposal was made
// with). A review shown to a person (ReviewOptions.Shown) is recorded (reviewed.json).
func reviewFacts(workspace string, l *Loaded, files []*gitdiff.File, res *Result, rv *Review, o ReviewOptions) {
	rv.PatchDigest = PatchDigest(l.Patch)
	rv.Held = []Hold{}
	switch {
	case res != nil && len(res.Problems) == 0:
		rv.Held = append(rv.Held, res.Held...)
	case files != nil:
		if root, err := os.OpenRoot(workspace); err == nil {
			if cr, err := controlRulesFor(root, workspace, l); err == nil {
				rv.Held = append(rv.Held, patchHolds(files, cr)...)
			}
			root.Close()
		}
	}
	if w := madeChange(l); w != "" {
		rv.Warnings = append(rv.Warnings, w)
	}
	if l.AgentDir != "" {
		rv.Tests = ReadTests(l.AgentDir, l.Patch)
	}
	if o.Shown {
		if err := recordReview(l, rv); err != nil {
			rv.Warnings = append(rv.Warnings, "could not record what this review showed: "+err.Error())
		}
	}
}
