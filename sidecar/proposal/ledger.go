package proposal

// The apply ledger: which proposal produced which lines of which files. Every apply (and every
// revert) is one entry, .agentcanvas/ledger/entries/<id>.json, written once through a temporary
// file and a rename and never changed; the exact bytes of each file before and after it are
// kept once each, by blob id, in the ledger's objects (objects.go). From these a
// revert takes one apply back out (revert.go) and the editor shows where a line came from
// (origins.go). One file per entry (rather than one file rewritten) means two processes
// applying at once never lose each other's entry, and a crash leaves an entry whole or absent.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// LedgerDir is the workspace-relative folder of the apply ledger.
const LedgerDir = ".agentcanvas/ledger"

const (
	ledgerEntries = LedgerDir + "/entries"
	ledgerObjects = LedgerDir + "/objects"
	ledgerVersion = 1
	originFile    = "proposal/origin.json"
)

// Origin is where a proposal came from, when a run made it: written by the engine next to
// proposal.json (proposal/origin.json, since spec §6.4 fixes proposal.json's keys) and copied
// into every ledger entry that applies the proposal. Tokens and cost are the agent's in its run
// up to the proposal (zero and CostKnown false when its backend does not report them).
type Origin struct {
	Flow string `json:"flow,omitempty"`
	// FlowFile is the run's flow file (workspace-relative when it is in the workspace): a
	// proposal that changes it is held (control.go).
	FlowFile string `json:"flowFile,omitempty"`
	// FlowUses are the workspace files the flow runs or gives its agents as rules: a
	// proposal that changes one is held too.
	FlowUses      []FlowUse `json:"flowUses,omitempty"`
	InteractionID string    `json:"interactionId,omitempty"`
	Round         int       `json:"round,omitempty"` // 1-based, as the agent's prompt says it
	Backend       string    `json:"backend,omitempty"`
	Prompt        string    `json:"prompt,omitempty"` // the start of the prompt the agent was given
	InputTokens   int64     `json:"inputTokens,omitempty"`
	OutputTokens  int64     `json:"outputTokens,omitempty"`
	CostUSD       float64   `json:"costUsd,omitempty"`
	CostKnown     bool      `json:"costKnown,omitempty"`
}

// FlowUse is a workspace file (or folder) a run's flow uses: an agent's command or setup
// script, a file of rules its agents are given.
type FlowUse struct {
	Path string `json:"path"` // workspace-relative, slash-separated
	Use  string `json:"use"`  // in words: "agent lead's runtime.command"
}

// LedgerEntry is one apply or revert.
type LedgerEntry struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Kind    string `json:"kind"` // "apply" or "revert"
	At      string `json:"at"`   // UTC, milliseconds
	RunID   string `json:"runId,omitempty"`
	AgentID string `json:"agentId,omitempty"`
	// Proposal is the workspace-relative proposal.json (or patch file) applied.
	Proposal string  `json:"proposal,omitempty"`
	Notes    string  `json:"notes,omitempty"` // proposal.json's notes (a worker's handoff goal)
	Origin   *Origin `json:"origin,omitempty"`
	// Merged: the apply went through a three-way merge with the workspace (rebase.go).
	Merged bool `json:"merged,omitempty"`
	// Revision is the proposal's revision that was applied (review.json; 0 for a proposal
	// never revised), and Comments the review comments that led to it, with the worker's answers.
	Revision int             `json:"revision,omitempty"`
	Comments []LedgerComment `json:"comments,omitempty"`
	// Patch is the digest of the proposal's patch applied (PatchDigest), and Part says the apply
	// was of a selection (some files or hunks): with the proposal and the revision, they are
	// what makes an apply happen once (once.go).
	Patch string `json:"patch,omitempty"`
	Part  bool   `json:"part,omitempty"`
	// Picked are the hunks of the patch a selection of hunks applied, by file.
	Picked map[string][]int `json:"picked,omitempty"`
	// Reverts is the entry a revert takes back out.
	Reverts string       `json:"reverts,omitempty"`
	Files   []LedgerFile `json:"files"`
}

// LedgerFile is one path an entry changed: its version before and after (nil: absent), and
// for text the changed lines without context (1-based, as in a hunk header).
type LedgerFile struct {
	Path   string      `json:"path"`
	Status string      `json:"status"` // added, modified, deleted
	Before *LedgerBlob `json:"before,omitempty"`
	After  *LedgerBlob `json:"after,omitempty"`
	// Perm is the file's permission bits before, in octal, when they are not the 644 or 755
	// its mode gives (a revert that puts the file back gives it these).
	Perm  string       `json:"perm,omitempty"`
	Hunks []LedgerHunk `json:"hunks,omitempty"`
}

// LedgerBlob is a version of a file: its blob id (git's, so `git cat-file` agrees) and mode.
type LedgerBlob struct {
	OID  string `json:"oid"`
	Mode string `json:"mode"` // 100644, 100755 or 120000
}

// LedgerHunk is one changed range.
type LedgerHunk struct {
	OldStart int `json:"oldStart"`
	OldLines int `json:"oldLines"`
	NewStart int `json:"newStart"`
	NewLines int `json:"newLines"`
}

func blobOf(s side) *LedgerBlob {
	if !s.exists {
		return nil
	}
	return &LedgerBlob{OID: blobOID(s.data), Mode: fmt.Sprintf("%o", s.mode)}
}

// versionSet is what a plan changes, path by path: each version's bytes and blob id (hashed
// once, for the ledger entry, the journal and the pack alike) and the permission bits before.
type versionSet struct {
	paths         []string
	before, after map[string]side
	blobs         map[string][2]*LedgerBlob // before, after
	perms         map[string]fs.FileMode
}

func planVersions(pl *plan) *versionSet {
	paths, before, after := planSides(pl)
	cs := &versionSet{paths: paths, before: before, after: after, blobs: make(map[string][2]*LedgerBlob, len(paths)), perms: planPerms(pl)}
	for _, p := range paths {
		cs.blobs[p] = [2]*LedgerBlob{blobOf(before[p]), blobOf(after[p])}
	}
	return cs
}

// planSides is what a plan changes, path by path: the bytes before (its backups) and after.
func planSides(pl *plan) (paths []string, before, after map[string]side) {
	before, after = map[string]side{}, map[string]side{}
	note := func(p string, b *backup) {
		if _, seen := before[p]; seen {
			return
		}
		paths = append(paths, p)
		before[p] = sideOfBackup(b)
		after[p] = side{}
	}
	for _, d := range pl.deletes {
		note(d.path, d.old)
	}
	for _, w := range pl.writes {
		note(w.path, w.old)
		after[w.path] = writtenSide(w)
	}
	return paths, before, after
}

// planPerms are the permission bits before of every file the plan replaces or deletes.
func planPerms(pl *plan) map[string]fs.FileMode {
	perms := map[string]fs.FileMode{}
	for _, d := range pl.deletes {
		if d.old != nil && d.old.kind == kindFile {
			perms[d.path] = d.old.perm
		}
	}
	for _, w := range pl.writes {
		if _, seen := perms[w.path]; !seen && w.old != nil && w.old.kind == kindFile {
			perms[w.path] = w.old.perm
		}
	}
	return perms
}

// gitPerm is the permission bits git's mode for s gives a new file.
func gitPerm(s side) fs.FileMode {
	if s.mode == modeExec {
		return 0o755
	}
	return 0o644
}

func sideOfBackup(b *backup) side {
	if b == nil {
		return side{}
	}
	m := modeFile
	switch {
	case b.kind == kindSymlink:
		m = modeSymlink
	case b.perm&0o100 != 0:
		m = modeExec
	}
	return side{exists: true, mode: m, data: b.data}
}

// ledgerFile describes one path's change, with its changed line ranges when both are text.
func ledgerFile(p string, before, after side) LedgerFile {
	return ledgerFileOf(p, before, after, [2]*LedgerBlob{blobOf(before), blobOf(after)})
}

// ledgerFileOf is ledgerFile with the versions' blob ids known.
func ledgerFileOf(p string, before, after side, blobs [2]*LedgerBlob) LedgerFile {
	f := LedgerFile{Path: p, Status: "modified", Before: blobs[0], After: blobs[1]}
	switch {
	case !before.exists:
		f.Status = "added"
	case !after.exists:
		f.Status = "deleted"
	}
	if before.text() && after.text() {
		for _, c := range lineChangesOf(before.data, after.data) {
			f.Hunks = append(f.Hunks, LedgerHunk{OldStart: c.a + 1, OldLines: c.na, NewStart: c.b + 1, NewLines: c.nb})
		}
	}
	return f
}

// ValidLedgerID says whether id has the form of a ledger entry id (newLedgerID's).
func ValidLedgerID(id string) bool {
	t, rnd, ok := strings.Cut(id, "-")
	if !ok || len(rnd) != 8 || !isHex(rnd) {
		return false
	}
	_, err := time.Parse("20060102T150405.000Z", t)
	return err == nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// newLedgerID is sortable by time: 20260219T101500.123Z-1a2b3c4d.
func newLedgerID(now time.Time) string {
	var r [4]byte
	rand.Read(r[:])
	return now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(r[:])
}

// buildEntry fills e with what cs changes (every version by blob id, the changed lines).
func buildEntry(e *LedgerEntry, cs *versionSet) {
	e.Version = ledgerVersion
	if e.ID == "" {
		now := time.Now()
		e.ID, e.At = newLedgerID(now), now.UTC().Format(timeLayout)
	}
	e.Files = make([]LedgerFile, 0, len(cs.paths))
	for _, p := range cs.paths {
		f := ledgerFileOf(p, cs.before[p], cs.after[p], cs.blobs[p])
		if perm, ok := cs.perms[p]; ok && perm != gitPerm(cs.before[p]) {
			f.Perm = fmt.Sprintf("%o", perm)
		}
		e.Files = append(e.Files, f)
	}
}

// writeEntry writes e, durably: once it is there, the apply it records has happened.
func writeEntry(root *os.Root, e *LedgerEntry) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	return writeLedgerEntry(root, e.ID, append(b, '\n'))
}

// writeLedgerEntry writes an entry's bytes, durably.
func writeLedgerEntry(root *os.Root, id string, b []byte) error {
	if err := root.MkdirAll(ledgerEntries, 0o755); err != nil {
		return err
	}
	return writeDurable(root, entryPath(id), b)
}

func entryPath(id string) string { return ledgerEntries + "/" + id + ".json" }

// Ledger is the workspace's apply ledger, oldest entry first, with which entries a later
// revert has taken back out. An entry file that cannot be read is named in the error; the
// others are still returned.
type Ledger struct {
	Entries  []LedgerEntry     `json:"entries"`
	Reverted map[string]string `json:"reverted"` // entry id → the revert entry's id
}

// ReadLedger reads every entry.
func ReadLedger(workspace string) (*Ledger, error) { return readLedger(workspace, nil) }

// readLedger reads the entries whose bytes keep accepts (nil: every one), a cheap look at each
// file before it is decoded.
func readLedger(workspace string, keep func([]byte) bool) (*Ledger, error) {
	lg := &Ledger{Entries: []LedgerEntry{}, Reverted: map[string]string{}}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	names, err := fs.ReadDir(root.FS(), ledgerEntries)
	if errors.Is(err, fs.ErrNotExist) {
		return lg, nil
	} else if err != nil {
		return nil, err
	}
	var errs []error
	for _, n := range names {
		name := n.Name()
		if n.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		b, err := readRootCapped(root, ledgerEntries+"/"+name, maxRecordBytes)
		if err == nil && keep != nil && !keep(b) {
			continue
		}
		var e LedgerEntry
		if err == nil {
			err = json.Unmarshal(b, &e)
		}
		if err == nil && e.ID+".json" != name {
			err = fmt.Errorf("its id is %q", e.ID)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Join(workspace, ledgerEntries, name), err))
			continue
		}
		lg.Entries = append(lg.Entries, e)
	}
	sort.SliceStable(lg.Entries, func(i, j int) bool { return lg.Entries[i].ID < lg.Entries[j].ID })
	for _, e := range lg.Entries {
		if e.Kind == "revert" && e.Reverts != "" {
			lg.Reverted[e.Reverts] = e.ID
		}
	}
	return lg, errors.Join(errs...)
}

// find resolves a reference to an apply entry: an entry id, or a proposal (its workspace-
// relative proposal.json), whose latest apply not reverted yet is meant.
func (lg *Ledger) find(ref string) (*LedgerEntry, error) {
	for i := range lg.Entries {
		if lg.Entries[i].ID == ref {
			return &lg.Entries[i], nil
		}
	}
	for i := len(lg.Entries) - 1; i >= 0; i-- {
		e := &lg.Entries[i]
		if e.Kind == "apply" && e.Proposal == ref {
			if _, gone := lg.Reverted[e.ID]; !gone {
				return e, nil
			}
		}
	}
	ids := make([]string, 0, len(lg.Entries))
	for _, e := range lg.Entries {
		ids = append(ids, e.ID)
	}
	if len(ids) > 5 {
		ids = ids[len(ids)-5:]
	}
	return nil, fmt.Errorf("the apply ledger has no applied entry %q (latest: %s)", ref, strings.Join(ids, ", "))
}

// readOrigin reads proposal/origin.json; nil when there is none or it does not parse.
func readOrigin(agentDir string) *Origin {
	if agentDir == "" {
		return nil
	}
	root, err := os.OpenRoot(agentDir)
	if err != nil {
		return nil
	}
	defer root.Close()
	b, err := readRootCapped(root, originFile, maxJSONBytes)
	if err != nil {
		return nil
	}
	var o Origin
	if json.Unmarshal(b, &o) != nil {
		return nil
	}
	return &o
}

// entryFor starts the ledger entry of an apply of l.
func entryFor(workspace string, l *Loaded) *LedgerEntry {
	e := &LedgerEntry{Kind: "apply", Proposal: relToWorkspace(workspace, l.PatchPath)}
	if l.Proposal != nil {
		e.RunID, e.AgentID, e.Notes = l.Proposal.RunID, l.Proposal.AgentID, l.Proposal.Notes
		e.Proposal = proposalKey(workspace, l.AgentDir)
		e.Origin = readOrigin(l.AgentDir)
		if e.Origin != nil {
			e.Origin.FlowUses = nil // what decided the holds, not where the lines came from
		}
		e.Revision, e.Comments = reviewOf(l)
	}
	return e
}

// LedgerComment is a review comment an applied revision answered.
type LedgerComment struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Line   int    `json:"line,omitempty"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Answer string `json:"answer,omitempty"`
}

// reviewOf is the revision of l and the comments revisions answered, for its ledger entry;
// nothing for a proposal that was never revised.
func reviewOf(l *Loaded) (int, []LedgerComment) {
	st, err := ReadReviewState(l.AgentDir, l.Proposal)
	if err != nil || st.Revision < 2 {
		return 0, nil
	}
	var cs []LedgerComment
	for _, c := range st.Comments {
		if c.AnsweredIn > 0 {
			cs = append(cs, LedgerComment{ID: c.ID, Path: c.Path, Line: c.Line, Kind: c.Kind, Text: c.Text, Answer: c.Answer})
		}
	}
	return st.Revision, cs
}

// proposalKey names a proposal in the ledger: its proposal.json relative to the workspace,
// with links resolved on both sides, so that every spelling of one proposal (a link to its
// sandbox, the workspace reached through a link) is one key and exactly once holds for all.
func proposalKey(workspace, agentDir string) string {
	ws, err := filepath.EvalSymlinks(workspace)
	dir, derr := filepath.EvalSymlinks(agentDir)
	if err != nil || derr != nil {
		return relToWorkspace(workspace, filepath.Join(agentDir, JSONFile))
	}
	return relToWorkspace(ws, filepath.Join(dir, JSONFile))
}

// relToWorkspace is p relative to the workspace (slashes), or p when it lies outside.
func relToWorkspace(workspace, p string) string {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(abs, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(rel)
	}
	return p
}
