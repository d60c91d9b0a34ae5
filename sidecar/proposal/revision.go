package proposal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/procalive"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// RevisionsDir keeps every earlier revision of a proposal: revisions/<n>/ holds its
// changes.patch, proposal.json and summary.md, and post/ the files as it left them (the
// interdiff's old side).
const RevisionsDir = "proposal/revisions"

// revising is the set of agent folders this process is revising (a sidecar serves many
// requests at once; review.json's process id tells other processes).
var revising = &folderSet{m: map[string]bool{}}

type folderSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (f *folderSet) has(dir string) bool { f.mu.Lock(); defer f.mu.Unlock(); return f.m[dir] }

func (f *folderSet) set(dir string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if on {
		f.m[dir] = true
	} else {
		delete(f.m, dir)
	}
}

// RevisionStart is what BeginRevision hands the revision run.
type RevisionStart struct {
	Loaded *Loaded
	State  *ReviewState
	// Comments are the open comments the worker is asked to answer.
	Comments []Comment
	// Patch is the current revision's changes.patch, for the worker's prompt.
	Patch []byte
	// Notices say what was settled first (an earlier revision whose process died).
	Notices []string
}

// ErrRevisionBusy is returned while another revision run works on the proposal.
var ErrRevisionBusy = errors.New("a revision of this proposal is already being made")

// BeginRevision prepares a pending proposal for revision run runID: the current revision is
// kept under revisions/<n>/ (its patch, its metadata and the files as it left them), and the
// proposal is marked as being revised by this process. It refuses when there is no open
// comment, or another live process revises the proposal.
func BeginRevision(workspace, ref, runID string) (*RevisionStart, error) {
	var start *RevisionStart
	_, err := updateReview(workspace, ref, func(l *Loaded, s *ReviewState) error {
		name := l.Proposal.RunID + "/" + l.Proposal.AgentID
		if st := readState(l.AgentDir); st != "pending" {
			return fmt.Errorf("proposal %s is %s: only a pending proposal can be revised", name, st)
		}
		if s.Revising != nil && (revising.has(l.AgentDir) || s.Revising.PID != os.Getpid() && procalive.Alive(s.Revising.PID)) {
			return fmt.Errorf("proposal %s: %w (run %s, process %d)", name, ErrRevisionBusy, s.Revising.RunID, s.Revising.PID)
		}
		open := s.Open()
		if len(open) == 0 {
			return fmt.Errorf("proposal %s has no open comment: add comments (PATH:LINE=TEXT) to say what to change", name)
		}
		if err := archiveRevision(l, s.Revision); err != nil {
			return fmt.Errorf("proposal %s: keeping revision %d: %w", name, s.Revision, err)
		}
		testKillAt("revision-kept")
		ids := make([]string, 0, len(open))
		for _, c := range open {
			ids = append(ids, c.ID)
		}
		s.Revising = &Revising{RunID: runID, PID: os.Getpid(), Since: time.Now().UTC().Format(timeLayout), Comments: ids}
		revising.set(l.AgentDir, true)
		patch, err := os.ReadFile(l.PatchPath)
		if err != nil {
			return err
		}
		start = &RevisionStart{Loaded: l, State: s, Comments: open, Patch: patch, Notices: s.Notices}
		return nil
	})
	return start, err
}

// RevisionResult says how a revision run ended for the proposal.
type RevisionResult struct {
	// Revision is the proposal's revision now; Changed says whether the run made a new one.
	Revision int  `json:"revision"`
	Changed  bool `json:"changed"`
	// Answered are the comments the worker answered (its reply per comment).
	Answered []Comment `json:"answered"`
}

// FinishRevision records the end of revision run runID (revisejournal.go): when the
// proposal's patch differs from the one kept by BeginRevision it becomes revision n+1, made by
// runID in answer to the comments sent; otherwise the kept copy is dropped and the revision
// stays. Each comment sent is marked with the worker's answer (answers by comment id; a
// comment the worker did not answer by name counts as answered by the revision when ok).
func FinishRevision(workspace, ref, runID string, sent []Comment, answers map[string]string, ok bool) (*RevisionResult, error) {
	res := &RevisionResult{}
	_, err := updateReview(workspace, ref, func(l *Loaded, s *ReviewState) error {
		root, err := os.OpenRoot(l.AgentDir)
		if err != nil {
			return err
		}
		defer root.Close()
		testKillAt("revision-finish")
		if res.Changed, err = settleRevision(workspace, root, l, s, runID, sent, answers, ok, false); err != nil {
			return err
		}
		for _, c := range s.Comments {
			if c.AnsweredIn != 0 && slices.ContainsFunc(sent, func(x Comment) bool { return x.ID == c.ID }) {
				res.Answered = append(res.Answered, c)
			}
		}
		res.Revision = s.Revision
		return nil
	})
	return res, err
}

// copyInRoot copies a file or a symbolic link (as a link) inside root.
func copyInRoot(root *os.Root, from, to string) error {
	fi, err := root.Lstat(from)
	if err != nil {
		return err
	}
	if err := root.MkdirAll(path.Dir(to), 0o755); err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := root.Readlink(from)
		if err != nil {
			return err
		}
		return root.Symlink(t, to)
	}
	b, err := root.ReadFile(from)
	if err != nil {
		return err
	}
	return root.WriteFile(to, b, fi.Mode().Perm())
}

// Interdiff is what changed between two revisions of a proposal, as a patch of the files the
// way revision From left them against the way revision To leaves them (To 0: the current).
type Interdiff struct {
	From  int    `json:"from"`
	To    int    `json:"to"`
	Patch string `json:"patch"`
	// Files are the paths the two revisions leave differently.
	Files []string `json:"files"`
	// Sides are each such file as the two revisions leave it, for a side-by-side diff.
	Sides []InterdiffSide `json:"sides"`
}

// InterdiffSide is one file of an interdiff, as revision From and revision To leave it ("" and
// Exists false where a revision has no such file; a symbolic link's target as its text).
type InterdiffSide struct {
	Path      string `json:"path"`
	Old       string `json:"old"`
	New       string `json:"new"`
	OldExists bool   `json:"oldExists"`
	NewExists bool   `json:"newExists"`
	Binary    bool   `json:"binary,omitempty"`
}

// GetInterdiff computes the interdiff of ref between revisions from and to (to 0 or the
// current revision: work/ as it is). A file neither revision changed is the same in both.
func GetInterdiff(workspace, ref string, from, to int) (*Interdiff, error) {
	l, err := Load(workspace, ref)
	if err != nil {
		return nil, err
	}
	if l.Proposal == nil || l.AgentDir == "" {
		return nil, fmt.Errorf("%s is a bare patch: it has no revisions", ref)
	}
	s, err := ReadReviewState(l.AgentDir, l.Proposal)
	if err != nil {
		return nil, err
	}
	if to == 0 {
		to = s.Revision
	}
	if from == 0 {
		from = to - 1
	}
	if from < 1 || from >= to || to > s.Revision {
		return nil, fmt.Errorf("proposal %s/%s has revisions 1 to %d: no interdiff from %d to %d", l.Proposal.RunID, l.Proposal.AgentID, s.Revision, from, to)
	}
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	oldSide, err := revisionSide(root, l, s, from)
	if err != nil {
		return nil, err
	}
	newSide, err := revisionSide(root, l, s, to)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for n := range oldSide.changed {
		names[n] = true
	}
	for n := range newSide.changed {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	out := &Interdiff{From: from, To: to, Files: []string{}, Sides: []InterdiffSide{}}
	var patch bytes.Buffer
	for _, n := range sorted {
		a, err := oldSide.read(root, n)
		if err != nil {
			return nil, err
		}
		b, err := newSide.read(root, n)
		if err != nil {
			return nil, err
		}
		if a.exists == b.exists && a.mode == b.mode && bytes.Equal(a.data, b.data) {
			continue
		}
		sections, _, _, err := changeSections(n, a, b)
		if err != nil {
			return nil, err
		}
		for _, sec := range sections {
			patch.Write(sec)
		}
		out.Files = append(out.Files, n)
		out.Sides = append(out.Sides, interdiffSide(n, a, b))
	}
	out.Patch = patch.String()
	return out, nil
}

// revSide is one revision's view of the files: those it changed come from its post/ folder
// (or work/ for the current revision), the others from input/.
type revSide struct {
	dir     string          // where its changed files are, inside the agent folder
	changed map[string]bool // path → exists after the revision
	// patched, for the current revision, are its files as its patch makes them: never work/
	// as it is now, which the worker may have changed since the patch was made.
	patched map[string]side
}

func revisionSide(root *os.Root, l *Loaded, s *ReviewState, n int) (*revSide, error) {
	pr := l.Proposal
	dir := l.Proposal.Paths.WorkDir
	if n != s.Revision {
		dir = path.Join(RevisionsDir, strconv.Itoa(n), "post")
		b, err := root.ReadFile(path.Join(RevisionsDir, strconv.Itoa(n), "proposal.json"))
		if err != nil {
			return nil, fmt.Errorf("revision %d of proposal %s/%s is not kept: %w", n, pr.RunID, pr.AgentID, err)
		}
		pr = &Proposal{}
		if err := json.Unmarshal(b, pr); err != nil {
			return nil, fmt.Errorf("revision %d: proposal.json: %w", n, err)
		}
	}
	rs := &revSide{dir: dir, changed: map[string]bool{}}
	if n == s.Revision {
		files, err := patchedFiles(root, l.Patch, safepath.Rules{})
		if err != nil {
			return nil, err
		}
		rs.patched = map[string]side{}
		for _, f := range files {
			rs.changed[f.path], rs.patched[f.path] = f.new.exists, f.new
		}
		return rs, nil
	}
	for _, c := range pr.ChangedFiles {
		rs.changed[c.Path] = c.Status != "deleted"
	}
	return rs, nil
}

func (rs *revSide) read(root *os.Root, name string) (side, error) {
	if f, ok := rs.patched[name]; ok {
		return f, nil
	}
	dir := rs.dir
	if exists, changed := rs.changed[name]; changed && !exists {
		return side{}, nil
	} else if !changed {
		dir = "input"
	}
	p := path.Join(dir, name)
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return side{}, nil
	}
	if err != nil {
		return side{}, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := root.Readlink(p)
		return side{exists: true, mode: modeSymlink, data: []byte(t)}, err
	}
	data, err := root.ReadFile(p)
	if err != nil {
		return side{}, err
	}
	m := modeFile
	if fi.Mode()&0o100 != 0 {
		m = modeExec
	}
	return side{exists: true, mode: m, data: data}, nil
}

// interdiffSide is one file's two versions; a binary file's content is left out.
func interdiffSide(name string, a, b side) InterdiffSide {
	s := InterdiffSide{Path: name, OldExists: a.exists, NewExists: b.exists, Binary: isBinary(a.data) || isBinary(b.data)}
	if !s.Binary {
		s.Old, s.New = string(a.data), string(b.data)
	}
	return s
}
