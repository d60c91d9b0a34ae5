package proposal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// MaxPatchBytes is the default limit on a patch's size.
const MaxPatchBytes = 64 << 20

// Selection picks part of a patch. The zero value selects everything.
type Selection struct {
	// Files by path (the new path; the old path for deletions). Empty: every file.
	Files []string `json:"files,omitempty"`
	// Hunks by path: 1-based hunk numbers as Review lists them. A file named here gets only
	// those hunks (text modifications only) and is selected even if Files does not name it.
	Hunks map[string][]int `json:"hunks,omitempty"`
	// Merge picks, in a file the workspace has changed since the proposal was made, the hunks
	// of its three-way merge to apply (numbered as the review's merge lists them); a conflict
	// needs a Resolve entry. Unpicked hunks keep the workspace's lines. (rebase.go)
	Merge map[string][]int `json:"merge,omitempty"`
	// Resolve settles conflicts of those merges, one hunk each.
	Resolve []Resolution `json:"resolve,omitempty"`
	// Against is the workspace file (blob id, "" for none) each merge was reviewed against: a
	// file changed since is refused rather than merged differently from what was reviewed.
	Against map[string]string `json:"against,omitempty"`
}

// all: nothing picked, so everything is (Files and Hunks only; the merge fields are rebase.go's).
func (s Selection) all() bool { return len(s.Files) == 0 && len(s.Hunks) == 0 }

// merging: the selection speaks of merges, so the proposal is re-based on the workspace.
func (s Selection) merging() bool {
	return len(s.Merge) > 0 || len(s.Resolve) > 0 || len(s.Against) > 0
}

// Problem is one reason a patch is refused.
type Problem struct {
	Path   string `json:"path,omitempty"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Path == "" {
		return p.Reason
	}
	return quoteNameWith(p.Path, false) + ": " + p.Reason // control characters shown escaped
}

// RefusedError is returned when Check or Apply refuses a patch. The workspace is unchanged.
type RefusedError struct {
	Problems []Problem
	// Applied, when set, is the ledger entry of an earlier apply of the very same proposal
	// revision: it is refused because it was applied already (once.go).
	Applied string
}

func (e *RefusedError) Error() string {
	var s []string
	for _, p := range e.Problems {
		s = append(s, p.String())
	}
	return "patch refused: " + strings.Join(s, "; ")
}

// fileKind says what a path is on disk or in a patch.
type fileKind int

const (
	kindNone fileKind = iota
	kindFile
	kindSymlink
	kindDir
	kindOther
)

func kindOfMode(m os.FileMode) fileKind {
	switch {
	case m&fs.ModeSymlink != 0:
		return kindSymlink
	case m.IsRegular():
		return kindFile
	case m.IsDir():
		return kindDir
	}
	return kindOther
}

// write is one path the plan creates or replaces.
type write struct {
	path string
	kind fileKind // kindFile or kindSymlink
	exec bool
	data []byte
	old  *backup // what is there now (nil: nothing)
	// tmp is the temporary file the new version is written to, beside path (as git does: a
	// file made in the folder it ends up in is far cheaper to make than one moved there); the
	// journal names it, so recovery removes it. Set by the apply.
	tmp string
	// perm, when not zero, are the permission bits of a file made where there was none (a
	// revert putting back a file that had other bits than 0644/0755).
	perm fs.FileMode
	// aside is where the file's old version is kept (under .agentcanvas/tmp) until the apply
	// stands, when it is not swapped out to tmp; set by the apply, named by the journal.
	aside string
}

// deletion is one path the plan removes.
type deletion struct {
	path  string
	old   *backup
	aside string // where the file is moved until the apply stands (under .agentcanvas/tmp)
}

// plan is a checked patch: deletions first, then writes (git's two phases). The backups are
// the bytes the check read and verified, so the apply restores exactly what was checked.
type plan struct {
	deletes  []deletion
	writes   []write
	files    []FileResult
	warnings []string // git apply's warnings (a mode other than the patch's)
}

// FileResult is one file of a checked or applied patch.
type FileResult struct {
	Path    string `json:"path"`
	OldPath string `json:"oldPath,omitempty"` // renames and copies
	Status  string `json:"status"`            // added, modified, deleted, renamed, copied
	Hunks   []int  `json:"hunks,omitempty"`   // the hunks applied when a selection named some
}

// section is the header of one "diff --git" block as written, for the name checks.
type section struct {
	line                                       int
	git                                        string
	minus, plus                                *string
	renameFrom, renameTo, copyFrom, copyTo     *string
	hasOldMode, hasNewMode, hasNewFile, hasDel bool
}

// gitHeaderPrefixes are the lines go-gitdiff (and git) read as part of a file header; any other
// line ends the header.
var gitHeaderPrefixes = []string{"--- ", "+++ ", "old mode ", "new mode ", "deleted file mode ", "new file mode ",
	"copy from ", "copy to ", "rename old ", "rename new ", "rename from ", "rename to ",
	"similarity index ", "dissimilarity index ", "index "}

func scanSections(patch []byte) []section {
	var out []section
	inHeader := false
	n := 0
	for rest := patch; len(rest) > 0; {
		n++
		var b []byte
		b, rest, _ = bytes.Cut(rest, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		if rest, ok := bytes.CutPrefix(b, []byte("diff --git ")); ok {
			out = append(out, section{line: n, git: string(rest)})
			inHeader = true
			continue
		}
		// Hunk lines are most of a patch: only header lines become strings.
		if !inHeader {
			continue
		}
		line := string(b)
		s := &out[len(out)-1]
		known := false
		for _, p := range gitHeaderPrefixes {
			if v, ok := strings.CutPrefix(line, p); ok {
				known = true
				v := v
				switch p {
				case "--- ":
					s.minus = &v
				case "+++ ":
					s.plus = &v
				case "rename from ", "rename old ":
					s.renameFrom = &v
				case "rename to ", "rename new ":
					s.renameTo = &v
				case "copy from ":
					s.copyFrom = &v
				case "copy to ":
					s.copyTo = &v
				}
				break
			}
		}
		if !known {
			inHeader = false
		}
	}
	return out
}

// nameMatches: a name as written equals quote(name) in git's quoting, with or without the
// quoting of bytes >= 0x80 (core.quotePath off), optionally followed by a tab and anything.
func nameMatches(written, name string) bool {
	for _, q := range []string{quoteNameWith(name, true), quoteNameWith(name, false)} {
		if written == q || strings.HasPrefix(written, q+"\t") {
			return true
		}
	}
	return false
}

func verifyHeader(s section, f *gitdiff.File) error {
	oldN, newN := f.OldName, f.NewName
	if !f.IsRename && !f.IsCopy && oldN != "" && newN != "" && oldN != newN {
		return fmt.Errorf("the old and new names disagree (%q, %q) without a rename", oldN, newN)
	}
	aName, bName := oldN, newN
	if aName == "" {
		aName = newN
	}
	if bName == "" {
		bName = oldN
	}
	ok := false
	for _, hi := range []bool{true, false} {
		if s.git == quoteNameWith("a/"+aName, hi)+" "+quoteNameWith("b/"+bName, hi) {
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("line %d: the 'diff --git' names do not match the other headers", s.line)
	}
	check := func(what string, written *string, want string, null bool) error {
		if written == nil {
			return nil
		}
		if null {
			if *written != "/dev/null" && !strings.HasPrefix(*written, "/dev/null\t") {
				return fmt.Errorf("the %s header names a file where /dev/null was expected", what)
			}
			return nil
		}
		if !nameMatches(*written, want) {
			return fmt.Errorf("the %s header does not match the 'diff --git' line", what)
		}
		return nil
	}
	for _, c := range []struct {
		what    string
		written *string
		want    string
		null    bool
	}{
		{"---", s.minus, "a/" + oldN, f.IsNew},
		{"+++", s.plus, "b/" + newN, f.IsDelete},
		{"rename from", s.renameFrom, oldN, false},
		{"rename to", s.renameTo, newN, false},
		{"copy from", s.copyFrom, oldN, false},
		{"copy to", s.copyTo, newN, false},
	} {
		if err := check(c.what, c.written, c.want, c.null); err != nil {
			return err
		}
	}
	return nil
}

func allowedMode(m os.FileMode) bool {
	switch int(m) {
	case 0, modeFile, modeExec, modeSymlink:
		return true
	}
	return false
}

func isFullOID(s string) bool { return len(s) == 40 && isHex(s) }

func fileStatus(f *gitdiff.File) string {
	switch {
	case f.IsNew:
		return "added"
	case f.IsDelete:
		return "deleted"
	case f.IsRename:
		return "renamed"
	case f.IsCopy:
		return "copied"
	}
	return "modified"
}

// parsePatch parses a patch and checks everything that needs no filesystem: size, git format,
// header agreement, names, modes, gitlinks, binary index lines, duplicates.
func parsePatch(patch []byte, rules safepath.Rules, limit int64) ([]*gitdiff.File, []Problem) {
	if limit <= 0 {
		limit = MaxPatchBytes
	}
	if int64(len(patch)) > limit {
		return nil, []Problem{{Reason: fmt.Sprintf("the patch is %d bytes, over the %d byte limit", len(patch), limit)}}
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(patch))
	if err != nil {
		return nil, []Problem{{Reason: "the patch does not parse: " + err.Error()}}
	}
	secs := scanSections(patch)
	if len(secs) != len(files) {
		return nil, []Problem{{Reason: "not a git patch: every file needs its own 'diff --git' header"}}
	}
	var probs []Problem
	add := func(p, format string, a ...any) {
		probs = append(probs, Problem{Path: p, Reason: fmt.Sprintf(format, a...)})
	}
	touched := map[string]string{} // path -> how ("delete" or "write")
	for i, f := range files {
		name := f.NewName
		if name == "" {
			name = f.OldName
		}
		before := len(probs)
		for _, n := range []string{f.OldName, f.NewName} {
			if n == "" {
				continue
			}
			c, err := safepath.Clean(n, rules)
			if err != nil {
				add(n, "%s", err.(*safepath.Error).Reason)
			} else if c != n {
				add(n, "the name is not in canonical form")
			}
		}
		if f.IsNew || f.IsRename || f.IsCopy {
			if why := nameRefusal(f.NewName); why != "" {
				add(f.NewName, "%s", why)
			}
		}
		if len(probs) > before {
			continue
		}
		if err := verifyHeader(secs[i], f); err != nil {
			add(name, "%v", err)
			continue
		}
		if int(f.OldMode) == modeGitlink || int(f.NewMode) == modeGitlink {
			add(name, "gitlinks (submodules) are not applied")
			continue
		}
		if !allowedMode(f.OldMode) || !allowedMode(f.NewMode) {
			add(name, "unsupported file mode (%o, %o)", f.OldMode, f.NewMode)
			continue
		}
		if f.IsNew && f.OldName != "" || f.IsDelete && f.NewName != "" {
			add(name, "the headers disagree about whether the file is created or deleted")
			continue
		}
		if f.IsBinary {
			if f.BinaryFragment == nil {
				add(name, "a binary change without data ('Binary files differ') cannot be applied; create the patch with --binary")
				continue
			}
			if (!f.IsNew && !isFullOID(f.OldOIDPrefix)) || !isFullOID(f.NewOIDPrefix) {
				add(name, "a binary patch needs full index lines")
				continue
			}
		}
		// Every path may be touched once, except a deletion followed by a creation (a type
		// change, as git writes it).
		mark := func(p, how string) {
			prev, seen := touched[p]
			switch {
			case !seen:
				touched[p] = how
			case prev == "delete" && how == "create":
				touched[p] = "write"
			default:
				add(p, "the patch touches this path more than once")
			}
		}
		switch {
		case f.IsNew:
			mark(f.NewName, "create")
		case f.IsDelete:
			mark(f.OldName, "delete")
		case f.IsRename:
			mark(f.OldName, "delete")
			mark(f.NewName, "create")
		case f.IsCopy:
			mark(f.NewName, "create")
		default:
			mark(f.NewName, "write")
		}
	}
	return files, probs
}

func selected(sel Selection, f *gitdiff.File) (bool, []int) {
	if sel.all() {
		return true, nil
	}
	for _, n := range []string{f.NewName, f.OldName} {
		if n == "" {
			continue
		}
		if h, ok := sel.Hunks[n]; ok {
			return true, h
		}
	}
	for _, p := range sel.Files {
		if p == f.NewName || (f.NewName == "" && p == f.OldName) || (f.IsRename && p == f.OldName) {
			return true, nil
		}
	}
	return false, nil
}

// addedBytes is the size of the lines the fragments add.
func addedBytes(frags []*gitdiff.TextFragment) int {
	n := 0
	for _, fr := range frags {
		for _, l := range fr.Lines {
			if l.Op == gitdiff.OpAdd {
				n += len(l.Line)
			}
		}
	}
	return n
}

// underDeleted reports whether a parent of p is a file the patch deletes (a file becoming a
// folder): then p cannot exist yet.
func underDeleted(p string, deletes map[string]bool) bool {
	for q := path.Dir(p); q != "."; q = path.Dir(q) {
		if deletes[q] {
			return true
		}
	}
	return false
}

// emptiedBy reports whether every file and symlink under the folder dir is in deletes.
func emptiedBy(root *os.Root, dir string, deletes map[string]bool) bool {
	ok := true
	err := fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !deletes[p] {
			ok = false
			return fs.SkipAll
		}
		return nil
	})
	return err == nil && ok
}

// diskPrefixProblem says why p cannot be reached on disk: a parent that is a symlink (in or
// out of the workspace: git refuses to write "beyond a symbolic link" too) or a file, unless
// the patch deletes that parent first.
func diskPrefixProblem(root *dirs, p string, deletes map[string]bool) string {
	comps := strings.Split(p, "/")
	for i := 1; i < len(comps); i++ {
		q := strings.Join(comps[:i], "/")
		if deletes[q] {
			return ""
		}
		if root.has(q) {
			continue // reached as a real folder already
		}
		fi, err := root.lstat(q)
		if errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		if err != nil {
			return err.Error()
		}
		switch k := kindOfMode(fi.Mode()); k {
		case kindDir:
		case kindSymlink:
			t, _ := root.readlink(q)
			return fmt.Sprintf("lies under %s, which is a symlink (to %s) in the workspace", q, t)
		default:
			return fmt.Sprintf("lies under %s, which is a %s in the workspace", q, kindName(k))
		}
	}
	return ""
}

// checkLinkTarget refuses symlinks that lead out of the workspace or into a blocked folder.
func checkLinkTarget(link, target string, rules safepath.Rules) error {
	if strings.HasPrefix(target, "/") || strings.Contains(target, "\\") || (len(target) > 1 && target[1] == ':') {
		return fmt.Errorf("the symlink target %q is absolute", target)
	}
	j := path.Join(path.Dir(link), target)
	if j == ".." || strings.HasPrefix(j, "../") {
		return fmt.Errorf("the symlink target %q leads out of the workspace", target)
	}
	if j == "." {
		return nil
	}
	if _, err := safepath.Clean(j, rules); err != nil {
		return fmt.Errorf("the symlink target %q: %s", target, err.(*safepath.Error).Reason)
	}
	return nil
}

func kindName(k fileKind) string {
	switch k {
	case kindFile:
		return "file"
	case kindSymlink:
		return "symlink"
	case kindDir:
		return "folder"
	case kindNone:
		return "missing path"
	}
	return "special file"
}

func describeApplyErr(err error) string {
	var ae *gitdiff.ApplyError
	if errors.As(err, &ae) {
		s := ae.Unwrap().Error()
		if ae.Fragment > 0 {
			s = fmt.Sprintf("hunk %d", ae.Fragment) + func() string {
				if ae.Line > 0 {
					return fmt.Sprintf(" at line %d", ae.Line)
				}
				return ""
			}() + ": " + s
		}
		return s
	}
	return err.Error()
}

// writeFile is a file being written by an apply.
type writeFile interface {
	Write([]byte) (int, error)
	Chmod(fs.FileMode) error
	Close() error
}
