// Package proposal turns a worker's sandbox into a reviewable, applicable proposal (spec §6.4–
// §6.6, §9.2): Create diffs input/ against work/ into proposal/changes.patch (plain `git apply`
// accepts it at the workspace root), proposal.json and summary.md; Review gives the editor
// files and hunks; Check and Apply verify every rule on every name in a patch and apply it
// all-or-nothing, restoring byte-exact backups on any failure.
//
// go-gitdiff parses patches and applies fragments; every filesystem, path, mode, symlink and
// preimage check is ours, and all workspace I/O goes through os.Root.
package proposal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/eventlog"
	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// File names inside an agent folder.
const (
	PatchFile    = "proposal/changes.patch"
	JSONFile     = "proposal/proposal.json"
	SummaryFile  = "proposal/summary.md"
	TestLogFile  = "proposal/test.log"
	StatusFile   = "proposal/status.json"
	DefaultFlow  = "adhoc"
	timeLayout   = "2006-01-02T15:04:05.000Z"
	jsonVersion  = "1"
	maxJSONBytes = 4 << 20
)

// Proposal is proposal.json, exactly spec §6.4.
type Proposal struct {
	Version      string        `json:"version"`
	RunID        string        `json:"runId"`
	AgentID      string        `json:"agentId"`
	CreatedAt    string        `json:"createdAt"`
	Base         Base          `json:"base"`
	Paths        Paths         `json:"paths"`
	ChangedFiles []ChangedFile `json:"changedFiles"`
	Notes        string        `json:"notes"`
}

// Base is the workspace revision the sandbox was prepared from.
type Base struct {
	GitHead string `json:"gitHead"`
}

// Paths are relative to the agent folder.
type Paths struct {
	InputDir    string `json:"inputDir"`
	WorkDir     string `json:"workDir"`
	PatchFile   string `json:"patchFile"`
	SummaryFile string `json:"summaryFile"`
}

// ChangedFile is one entry of changedFiles. Status is "added", "modified" or "deleted".
type ChangedFile struct {
	Path   string `json:"path"`
	Status string `json:"status"`
}

// Status is proposal/status.json, written when a proposal is applied or rejected (not part of
// spec §6.4, which fixes proposal.json).
type Status struct {
	State  string   `json:"state"` // "applied" or "rejected"
	At     string   `json:"at"`
	Reason string   `json:"reason,omitempty"`
	Files  []string `json:"files,omitempty"` // applied paths (a selection may be a subset)
}

// Loaded is a proposal resolved from a reference: a proposal.json, a sandbox agent folder, or
// a bare .patch file (then Proposal is nil and AgentDir empty).
type Loaded struct {
	Proposal  *Proposal
	AgentDir  string // absolute
	PatchPath string // absolute
	Patch     []byte
}

// Summary is one row of List.
type Summary struct {
	RunID        string        `json:"runId"`
	AgentID      string        `json:"agentId"`
	AgentDir     string        `json:"agentDir"`     // workspace-relative
	ProposalFile string        `json:"proposalFile"` // workspace-relative
	CreatedAt    string        `json:"createdAt"`
	GitHead      string        `json:"gitHead"`
	ChangedFiles []ChangedFile `json:"changedFiles"`
	State        string        `json:"state"` // "pending", "applied", "rejected" or "reverted"
	Error        string        `json:"error,omitempty"`
	// Conflicts (pending proposals only): the other pending proposals this one collides with
	// (collide.go), empty when none.
	Conflicts []ProposalRef `json:"conflicts,omitempty"`
	// Order (pending proposals only): the suggested order of applying, from 1: the proposal
	// that conflicts least first.
	Order int `json:"order,omitempty"`
	// Revision is the proposal's current revision (review.json), 0 for one never revised.
	Revision int `json:"revision,omitempty"`
}

// Load resolves ref. A relative ref is tried against the current folder, then the workspace.
// The patch a proposal.json names must stay inside its agent folder.
func Load(workspace, ref string) (*Loaded, error) {
	p := ref
	if !filepath.IsAbs(p) {
		if _, err := os.Lstat(p); err != nil {
			p = filepath.Join(workspace, ref)
		}
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %w", ref, err)
	}
	var agentDir string
	switch {
	case fi.IsDir():
		agentDir = p
	case strings.HasSuffix(p, ".json"):
		agentDir = filepath.Dir(filepath.Dir(p))
		if filepath.Base(filepath.Dir(p)) != "proposal" {
			return nil, fmt.Errorf("proposal %s: a proposal.json must sit in a sandbox's proposal/ folder", ref)
		}
	case ownPatch(p):
		// A proposal's own patch is the proposal: its apply is keyed, checked and recorded
		// as the proposal's (a second apply of it is refused as one).
		if l, err := Load(workspace, filepath.Dir(filepath.Dir(p))); err == nil && l.PatchPath == p {
			return l, nil
		}
		fallthrough
	default:
		data, err := readCapped(p, MaxPatchBytes)
		if err != nil {
			return nil, fmt.Errorf("patch %s: %w", ref, err)
		}
		return &Loaded{PatchPath: p, Patch: data}, nil
	}
	return loadAgentDir(agentDir, ref)
}

// loadAgentDir loads the proposal of a sandbox's agent folder: its proposal.json and the
// patch that names, read inside the folder.
func loadAgentDir(agentDir, ref string) (*Loaded, error) {
	root, err := os.OpenRoot(agentDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	jb, err := readRootCapped(root, JSONFile, maxJSONBytes)
	if err != nil {
		return nil, fmt.Errorf("proposal %s: %w", ref, err)
	}
	var pr Proposal
	if err := json.Unmarshal(jb, &pr); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(agentDir, JSONFile), err)
	}
	if pr.Version != jsonVersion {
		return nil, fmt.Errorf("%s: field version: %q is not \"1\"", filepath.Join(agentDir, JSONFile), pr.Version)
	}
	pf := pr.Paths.PatchFile
	if pf == "" {
		pf = PatchFile
	}
	clean, err := safepath.Clean(pf, safepath.Lexical)
	if err != nil {
		return nil, fmt.Errorf("%s: field paths.patchFile: %w (the patch must stay inside its sandbox)", filepath.Join(agentDir, JSONFile), err)
	}
	data, err := readRootCapped(root, clean, MaxPatchBytes) // os.Root: no symlink out of the sandbox
	if err != nil {
		return nil, fmt.Errorf("%s: field paths.patchFile: %w", filepath.Join(agentDir, JSONFile), err)
	}
	return &Loaded{Proposal: &pr, AgentDir: agentDir, PatchPath: filepath.Join(agentDir, filepath.FromSlash(clean)), Patch: data}, nil
}

// ownPatch reports whether the file p is a sandbox's proposal patch: proposal/changes.patch
// beside a proposal.json.
func ownPatch(p string) bool {
	if filepath.Base(p) != filepath.Base(PatchFile) || filepath.Base(filepath.Dir(p)) != "proposal" {
		return false
	}
	fi, err := os.Lstat(filepath.Join(filepath.Dir(p), filepath.Base(JSONFile)))
	return err == nil && fi.Mode().IsRegular()
}

var errTooBig = errors.New("patch is larger than the limit")

func readCapped(name string, limit int64) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%w (%d > %d bytes)", errTooBig, fi.Size(), limit)
	}
	return os.ReadFile(name)
}

func readRootCapped(root *os.Root, name string, limit int64) ([]byte, error) {
	fi, err := root.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w (%d > %d bytes)", name, errTooBig, fi.Size(), limit)
	}
	return root.ReadFile(name)
}

// List returns every proposal in the workspace's sandboxes, newest first. A proposal.json that
// does not parse is listed with Error set. Pending proposals carry their conflicts with each
// other and a suggested order of applying them.
func List(workspace string) ([]Summary, error) {
	out, err := list(workspace)
	if err == nil {
		orderOpen(workspace, out)
	}
	return out, err
}

// revisionIn is the revision review.json of the agent folder dir records, 0 when it has none
// beyond the first.
func revisionIn(root *os.Root, dir string) int {
	b, err := root.ReadFile(path.Join(dir, ReviewStateFile))
	if err != nil {
		return 0
	}
	var st struct {
		Revision int `json:"revision"`
	}
	if json.Unmarshal(b, &st) != nil || st.Revision < 2 {
		return 0
	}
	return st.Revision
}

func list(workspace string) ([]Summary, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	runs, err := fs.ReadDir(root.FS(), sandbox.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []Summary
	for _, r := range runs {
		if !r.IsDir() {
			continue
		}
		agents, err := fs.ReadDir(root.FS(), path.Join(sandbox.Dir, r.Name()))
		if err != nil {
			continue
		}
		for _, a := range agents {
			dir := path.Join(sandbox.Dir, r.Name(), a.Name())
			if !a.IsDir() || strings.HasPrefix(a.Name(), ".") {
				continue
			}
			jf := path.Join(dir, JSONFile)
			jb, err := root.ReadFile(jf)
			if err != nil {
				continue // prepared, no proposal yet
			}
			s := Summary{AgentDir: dir, ProposalFile: jf, State: "pending", RunID: r.Name()}
			var pr Proposal
			if err := json.Unmarshal(jb, &pr); err != nil {
				s.Error = fmt.Sprintf("%s: %v", jf, err)
			} else {
				s.RunID, s.AgentID, s.CreatedAt, s.GitHead, s.ChangedFiles = pr.RunID, pr.AgentID, pr.CreatedAt, pr.Base.GitHead, pr.ChangedFiles
			}
			s.State = stateIn(root, dir)
			s.Revision = revisionIn(root, dir)
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt > out[j].CreatedAt
		}
		return out[i].AgentDir < out[j].AgentDir
	})
	return out, nil
}

// Reject records a rejection (status.json and a proposal_rejected event). A proposal applied
// and not reverted is refused (the workspace holds its changes, and a status "rejected" would
// say otherwise): revert it first. It runs with the workspace lock held, after recovery.
func Reject(workspace, ref, reason, flow string) error {
	l, err := Load(workspace, ref)
	if err != nil {
		return err
	}
	if l.AgentDir == "" {
		return errors.New("a bare patch file has no proposal to reject")
	}
	e := entryFor(workspace, l)
	lk, err := wslock.Acquire(context.Background(), workspace, "rejecting "+describeProposal(e, ref), wslock.Options{})
	if err != nil {
		return err
	}
	defer lk.Release()
	if err := recoverWorkspace(workspace); err != nil {
		return err
	}
	if err := refuseIfApplied(workspace, e, "reject it"); err != nil {
		return err
	}
	if err := writeStatus(l, Status{State: "rejected", Reason: reason}); err != nil {
		return err
	}
	return logEvent(workspace, flow, l, "proposal_rejected", map[string]any{"reason": reason})
}

func writeStatus(l *Loaded, st Status) error {
	st.At = time.Now().UTC().Format(timeLayout)
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return err
	}
	defer root.Close()
	b, _ := json.MarshalIndent(st, "", "  ")
	return writeFileAtomic(root, StatusFile, append(b, '\n'), 0o644)
}

// writeFileAtomic writes through a temporary file (a fresh name: two writers never share one)
// and a rename.
func writeFileAtomic(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	tmp := tempName(name)
	if err := root.WriteFile(tmp, data, perm); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// originFlow is the flow that made the proposal (its origin.json), where its events belong
// when the caller names none; DefaultFlow for a proposal no run made.
func originFlow(l *Loaded) string {
	if l != nil && l.AgentDir != "" {
		if o := readOrigin(l.AgentDir); o != nil && o.Flow != "" {
			return o.Flow
		}
	}
	return DefaultFlow
}

// logEvent appends a proposal event; the proposal's reference is a workspace-relative path
// when it lies inside the workspace.
func logEvent(workspace, flow string, l *Loaded, name string, fields map[string]any) error {
	if flow == "" {
		flow = originFlow(l)
	}
	lg, err := eventlog.Open(workspace, flow)
	if err != nil {
		return err
	}
	defer lg.Close()
	ev := eventlog.Event{Event: name, Fields: fields}
	if ev.Fields == nil {
		ev.Fields = map[string]any{}
	}
	if l.Proposal != nil {
		ev.RunID = l.Proposal.RunID
		ev.Fields["agent"] = l.Proposal.AgentID // the field every event names its agent by
	}
	if o := readOrigin(l.AgentDir); l.AgentDir != "" && o != nil {
		ev.InteractionID = o.InteractionID // a run's proposal: the interaction that made it
	}
	ref := l.PatchPath
	if l.AgentDir != "" {
		ref = filepath.Join(l.AgentDir, JSONFile)
	}
	ev.Fields["proposal"] = relToWorkspace(workspace, ref)
	return lg.Append(ev)
}
