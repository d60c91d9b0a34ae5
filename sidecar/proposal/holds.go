package proposal

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// What a proposal may not do without a person's word: change a control file (control.go) or
// add a name that looks like another (names.go). The check finds these holds on every apply
// and every review; the apply goes ahead only when the person has confirmed each held file by
// name (ApplyOptions.Confirm), so neither auto-apply nor a hasty click applies one.

// controlRulesFor are the rules for l in the workspace at root: the built-in list, the
// workspace's own (an unusable list is an error) and the flow of the run that made l.
func controlRulesFor(root *os.Root, workspace string, l *Loaded) (controlRules, error) {
	extra, err := readControlList(root)
	if err != nil {
		return controlRules{}, err
	}
	cr := controlRules{extra: extra}
	if o := readOrigin(l.AgentDir); o != nil {
		cr.flowFile = flowFileOf(workspace, o.FlowFile)
		cr.uses = o.FlowUses
	}
	return cr, nil
}

// planHolds are the holds of a checked plan: every file it touches (both names of a rename),
// with both versions as the check read and made them, and every name it adds.
func planHolds(d *dirs, pl *plan, cr controlRules) []Hold {
	before, after := map[string]version{}, map[string]version{}
	for _, del := range pl.deletes {
		before[del.path] = backupVersion(del.old)
	}
	for _, w := range pl.writes {
		if _, seen := before[w.path]; !seen {
			before[w.path] = backupVersion(w.old)
		}
		after[w.path] = version{exists: true, link: w.kind == kindSymlink, data: w.data, known: true}
	}
	var out []Hold
	var touched []string
	for _, f := range pl.files {
		for _, p := range uniq(f.OldPath, f.Path) {
			touched = append(touched, p)
			b, a := before[p], after[p]
			b.known, a.known = true, true
			if why := cr.classify(p, b, a); why != "" {
				out = appendHold(out, Hold{Path: p, Kind: HoldControl, Reason: why})
			} else if why := shortName(p); why != "" {
				out = appendHold(out, Hold{Path: p, Kind: HoldName, Reason: why})
			}
		}
	}
	for _, h := range folderHolds(d, pl, cr, touched) {
		out = appendHold(out, h)
	}
	return append(out, addedNameHolds(d, addedPaths(pl.files), out)...)
}

// patchHolds are the holds read from a patch alone (a proposal that does not apply now has no
// plan): names and symbolic links only; a content rule that cannot see the content holds.
func patchHolds(files []*gitdiff.File, cr controlRules) []Hold {
	var out []Hold
	for _, f := range files {
		for _, p := range uniq(f.OldName, f.NewName) {
			v := version{exists: true}
			if why := cr.classify(p, v, v); why != "" {
				out = appendHold(out, Hold{Path: p, Kind: HoldControl, Reason: why})
			} else if why := shortName(p); why != "" {
				out = appendHold(out, Hold{Path: p, Kind: HoldName, Reason: why})
			}
		}
		if f.IsNew || f.IsRename || f.IsCopy {
			if why := lookAlikeName(f.NewName); why != "" {
				out = appendHold(out, Hold{Path: f.NewName, Kind: HoldName, Reason: why})
			}
		}
	}
	return out
}

func backupVersion(b *backup) version {
	if b == nil || b.kind == kindNone {
		return version{known: true}
	}
	return version{exists: true, link: b.kind == kindSymlink, data: b.data, known: true}
}

func uniq(ps ...string) []string {
	var out []string
	for _, p := range ps {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// appendHold adds h (with its Shown name) unless p is held already.
func appendHold(hs []Hold, h Hold) []Hold {
	for _, x := range hs {
		if x.Path == h.Path {
			return hs
		}
	}
	h.Shown = ShowName(h.Path)
	return append(hs, h)
}

// addedPaths are the names a plan brings into the workspace.
func addedPaths(files []FileResult) []string {
	var out []string
	for _, f := range files {
		switch f.Status {
		case "added", "renamed", "copied":
			out = append(out, f.Path)
		}
	}
	return out
}

// addedNameHolds holds each added name that is written in look-alike letters or collides,
// once normalised, with a name the workspace has or another added name.
func addedNameHolds(d *dirs, added []string, held []Hold) []Hold {
	var out []Hold
	folders := map[string]*folderNames{}
	seen := map[string]string{} // fold of an added path → the path
	for _, p := range added {
		if why := lookAlikeName(p); why != "" {
			out = appendHold(out, Hold{Path: p, Kind: HoldName, Reason: why})
			continue
		}
		if other, foldCase := collidingName(d, folders, p); other != "" {
			how := "Unicode NFC and look-alike letters"
			if foldCase {
				how += "; letter case, which this file system ignores"
			}
			out = appendHold(out, Hold{Path: p, Kind: HoldName, Reason: "its name collides with " + quoteShown(other) + " once normalised (" + how + "): a person cannot tell them apart"})
			continue
		}
		key := nameFold(p, true)
		if other, ok := seen[key]; ok {
			out = appendHold(out, Hold{Path: p, Kind: HoldName, Reason: "its name collides with " + quoteShown(other) + ", which the proposal adds too, once normalised: a person cannot tell them apart"})
			continue
		}
		seen[key] = p
	}
	for _, h := range held {
		out = slices.DeleteFunc(out, func(x Hold) bool { return x.Path == h.Path })
	}
	return out
}

// folderNames are the names in one workspace folder, folded, and whether it ignores case.
type folderNames struct {
	foldCase bool
	names    map[string]string // fold → the name on disk
}

// collidingName is the name in the workspace that p's first new component collides with
// (that component is not in its folder as it is written, but something folds alike), or "",
// and whether that folder ignores letter case.
func collidingName(d *dirs, folders map[string]*folderNames, p string) (string, bool) {
	comps := strings.Split(p, "/")
	for i, c := range comps {
		dir := strings.Join(comps[:i], "/")
		if dir == "" {
			dir = "."
		}
		if _, err := d.root.Lstat(path.Join(dir, c)); err == nil {
			continue // this component exists exactly: look at the next
		}
		fn := listFolder(d, folders, dir)
		if fn == nil {
			return "", false
		}
		if other, ok := fn.names[nameFold(c, fn.foldCase)]; ok && other != c {
			return path.Join(dir, other), fn.foldCase
		}
		return "", false
	}
	return "", false
}

// listFolder reads (once) a workspace folder's names; nil when it does not exist.
func listFolder(d *dirs, folders map[string]*folderNames, dir string) *folderNames {
	if fn, ok := folders[dir]; ok {
		return fn
	}
	f, err := d.root.Open(dir)
	if err != nil {
		folders[dir] = nil
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	fn := &folderNames{foldCase: ignoresCase(d, dir, names), names: map[string]string{}}
	for _, n := range names {
		fn.names[nameFold(n, fn.foldCase)] = n
	}
	folders[dir] = fn
	return fn
}

// ignoresCase says whether the file system of folder dir treats names that differ only in
// letter case as one: it looks up an entry under its other case.
func ignoresCase(d *dirs, dir string, names []string) bool {
	for _, n := range names {
		other := swapCase(n)
		if other == n {
			continue
		}
		a, err1 := d.root.Lstat(path.Join(dir, n))
		b, err2 := d.root.Lstat(path.Join(dir, other))
		return err1 == nil && err2 == nil && os.SameFile(a, b)
	}
	return false
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}

// unconfirmed are the holds the person has not confirmed: Confirm names each by its path or
// by the name as shown.
func unconfirmed(hs []Hold, confirm []string) []Hold {
	var out []Hold
	for _, h := range hs {
		if !slices.Contains(confirm, h.Path) && !slices.Contains(confirm, h.Shown) {
			out = append(out, h)
		}
	}
	return out
}

// heldReason is the HeldError reason for holds a person has not confirmed.
func heldReason(hs []Hold) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s (%s)", h.Shown, h.Reason))
	}
	what := "it changes how things run"
	for _, h := range hs {
		if h.Kind == HoldName {
			what = "it changes how things run or adds a name that looks like another"
			break
		}
	}
	return what + ": " + strings.Join(parts, "; ") + "; a person confirms each file by name before it is applied"
}

// withProposalChecks wraps the planner of an apply of l with what a proposal adds to a
// patch's checks, once the plan passes them: the patch is the one reviewed (integrity.go) and
// touches only the files proposal.json lists, and its holds are put in res.Held (an unusable
// workspace list refuses the apply: it cannot be told what is held).
func withProposalChecks(workspace string, l *Loaded, res *Result, o ApplyOptions, planner func(*dirs) (*plan, []Problem)) func(*dirs) (*plan, []Problem) {
	return func(d *dirs) (*plan, []Problem) {
		pl, probs := planner(d)
		if len(probs) > 0 || pl == nil {
			return pl, probs
		}
		if !o.Reviewing {
			why, warn := patchChanged(l, o.Reviewed)
			if why != "" {
				return nil, []Problem{{Reason: why}}
			}
			if warn != "" {
				res.Warnings = append(res.Warnings, warn)
			}
		}
		if probs := unlistedFiles(l, pl); len(probs) > 0 {
			return nil, probs
		}
		cr, err := controlRulesFor(d.root, workspace, l)
		if err != nil {
			return nil, []Problem{{Reason: err.Error() + " (fix the list: until then nothing is applied, since it cannot be told which files are held)"}}
		}
		res.Held = planHolds(d, pl, cr)
		return pl, nil
	}
}

// holdBack is the HeldError for the holds o has not confirmed, or nil (always nil for a
// review, which reports them).
func holdBack(res *Result, o ApplyOptions) error {
	if o.Reviewing {
		return nil
	}
	if hs := unconfirmed(res.Held, o.Confirm); len(hs) > 0 {
		return &HeldError{Reason: heldReason(hs), Held: hs}
	}
	return nil
}
