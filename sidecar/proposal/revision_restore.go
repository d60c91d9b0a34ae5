package proposal

import (
	"os"
	"path"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// A revision run that fails (stopped, timed out, errored) is not a revision: its half-done
// edits must not stay in work/ as if they were revision n, nor in the proposal's patch (the
// engine remakes the proposal after every step). restoreRevision puts both back as revision
// n left them, from the copy BeginRevision kept under revisions/<n>/.

// restoreRevision makes work/ and the proposal's files what revision n (kept in kept) had.
func restoreRevision(workspace string, root *os.Root, l *Loaded, s *ReviewState, kept string) error {
	rev, err := revisionSide(root, l, &ReviewState{Revision: s.Revision + 1}, s.Revision)
	if err != nil {
		return err
	}
	meta, err := sandbox.ReadMeta(workspace, l.Proposal.RunID, l.Proposal.AgentID)
	if err != nil {
		return err
	}
	in, err := scanTree(root, l.Proposal.Paths.InputDir, safepath.Rules{}, nil, nil)
	if err != nil {
		return err
	}
	work, err := scanTree(root, l.Proposal.Paths.WorkDir, safepath.Rules{}, nil, meta.Shared)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for _, m := range []map[string]node{in, work} {
		for p := range m {
			names[p] = true
		}
	}
	for p := range rev.changed {
		names[p] = true
	}
	wr, err := root.OpenRoot(l.Proposal.Paths.WorkDir) // writes cannot leave work/
	if err != nil {
		return err
	}
	defer wr.Close()
	now := &revSide{dir: l.Proposal.Paths.WorkDir, changed: map[string]bool{}}
	for p := range names {
		want, err := rev.read(root, p)
		if err != nil {
			return err
		}
		now.changed[p] = true
		have, err := now.read(root, p)
		if err != nil || !have.equal(want) {
			if err := putSide(wr, p, want); err != nil {
				return err
			}
		}
	}
	return restoreRevisionFiles(root, kept, PatchFile, JSONFile, SummaryFile)
}

// putSide makes p in the worker's folder what s says (a file, a link, or nothing).
func putSide(wr *os.Root, p string, s side) error {
	if err := wr.RemoveAll(p); err != nil {
		return err
	}
	if !s.exists {
		return nil
	}
	if err := wr.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	if s.mode == modeSymlink {
		return wr.Symlink(string(s.data), p)
	}
	perm := os.FileMode(0o644)
	if s.mode == modeExec {
		perm = 0o755
	}
	return wr.WriteFile(p, s.data, perm)
}
