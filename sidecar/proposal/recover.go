package proposal

// Recovery of an apply (or revert) cut short: a killed process, a machine that went down, an
// editor reloaded mid-apply. Every command that reads or writes the workspace's proposal state
// recovers first, with the workspace lock held. An apply whose ledger entry was written (the
// commit point) is finished: its status and event are written. Any other is rolled back: each
// file the apply had replaced is put back from the ledger's copy of its old version. Why roll
// back: the person was never told the apply happened, the proposal is still pending and can be
// applied again in one command, and the way back needs nothing the apply had not stored before
// it began. A file changed again since (by the editor) is left as it is and named.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// A sandbox is copied from the workspace only after this recovery (sandbox.RecoverLocked).
func init() { sandbox.RecoverLocked = recoverLocked }

// Recover finishes or rolls back an interrupted apply of workspace, and removes the temporary
// files it left; the notice says what was done in one line ("" when there was nothing).
func Recover(ctx context.Context, workspace string) (string, error) {
	if !recoveryNeeded(workspace) {
		return "", nil
	}
	lk, err := wslock.Acquire(ctx, workspace, "recovering an interrupted apply", wslock.Options{})
	if err != nil {
		return "", err
	}
	defer lk.Release()
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", err
	}
	defer root.Close()
	return recoverLocked(workspace, root)
}

// recoveryNeeded looks, without the lock, for a journal or a temporary file.
func recoveryNeeded(workspace string) bool {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return false
	}
	defer root.Close()
	if _, err := root.Lstat(journalFile); err == nil {
		return true
	}
	names, _ := fs.ReadDir(root.FS(), tmpDir)
	return len(names) > 0
}

// recoverLocked is Recover with the lock held.
func recoverLocked(workspace string, root *os.Root) (string, error) {
	j, err := readJournal(root)
	if err != nil {
		return "", fmt.Errorf("an interrupted apply could not be recovered: %w", err)
	}
	if j == nil {
		return "", emptyTmp(root) // temporary files of a write cut short before any journal
	}
	if err := j.check(); err != nil {
		return "", fmt.Errorf("an interrupted apply could not be recovered (the journal %s stays): %w", journalFile, err)
	}
	var notice string
	var left *journalFinish
	done := committed(root, j)
	if done {
		notice, left, err = finishJournal(workspace, root, j)
	} else {
		notice, err = rollbackJournal(root, j)
	}
	if err != nil {
		return "", fmt.Errorf("an interrupted %s could not be recovered: %w", j.What, err)
	}
	// Only now, with every file as it must be, go the copies the recovery might have needed.
	removeTemps(root, j)
	for i := len(j.Dirs) - 1; i >= 0 && !done; i-- {
		root.Remove(j.Dirs[i]) // only while empty: a folder someone filled since stays
	}
	if err := emptyTmp(root); err != nil {
		return notice, err
	}
	if left != nil { // the status or the event could not be written again: the next command tries
		j.Finish = left
		if j.write(root) == nil {
			return notice + "; the journal stays, and the next agentcanvas command records it", nil
		}
	}
	return notice, removeJournal(root)
}

// committed: the journal's apply wrote its ledger entry, its commit point.
func committed(root *os.Root, j *journal) bool {
	if j.Entry == nil {
		return false
	}
	_, err := root.Lstat(entryPath(j.Entry.ID))
	return err == nil
}

// check refuses a journal that names a path no apply writes (one the built-in rules refuse:
// .git, .agentcanvas, …), and forgets any temporary name that is not one of ours beside its
// file or in .agentcanvas/tmp: such a name is never read, moved or removed. A journal is a file
// in the workspace, and recovery acts on what it names.
func (j *journal) check() error {
	if j.Entry != nil && !ValidLedgerID(j.Entry.ID) {
		return fmt.Errorf("it names the ledger entry %q", j.Entry.ID)
	}
	for i := range j.Files {
		c := &j.Files[i]
		if p, err := safepath.Clean(c.Path, safepath.Rules{}); err != nil || p != c.Path {
			return fmt.Errorf("it names the path %q, which no apply writes", c.Path)
		}
		if c.Tmp != "" && (!isTempName(c.Tmp) || path.Dir(c.Tmp) != path.Dir(c.Path)) {
			c.Tmp = ""
		}
		if c.Aside != "" && (!isTempName(c.Aside) || path.Dir(c.Aside) != tmpDir) {
			c.Aside = ""
		}
	}
	for _, d := range j.Dirs {
		if p, err := safepath.Clean(d, safepath.Rules{}); err != nil || p != d {
			return fmt.Errorf("it names the folder %q, which no apply makes", d)
		}
	}
	return nil
}

func entryID(j *journal) string {
	if j.Entry == nil {
		return "-"
	}
	return j.Entry.ID
}

// finishJournal writes what an apply past its commit point had still to write. First the
// ledger is made to hold a whole copy of every version the entry names, from the copies the
// apply kept (a power loss can lose the pack's last bytes): a revert needs them.
func finishJournal(workspace string, root *os.Root, j *journal) (string, *journalFinish, error) {
	lost, err := restoreLedgerCopies(root, j)
	if err != nil {
		return "", nil, err
	}
	if j.Finish != nil {
		if j.Finish.Fields == nil {
			j.Finish.Fields = map[string]any{}
		}
		j.Finish.Fields["recovered"] = true
		if j.Finish.Proposal != "" {
			removeTempsIn(root, path.Dir(j.Finish.Proposal)) // a status write cut short
		}
	}
	msg := fmt.Sprintf("an interrupted %s was finished: it had been applied and recorded in the ledger (entry %s)", j.What, j.Entry.ID)
	if len(lost) > 0 {
		msg += fmt.Sprintf("; the ledger lost its copy of the old version of %s, and no other copy was kept: this apply cannot be reverted there", strings.Join(lost, ", "))
	}
	warn, left := finishRecord(workspace, j.Finish, nil)
	if len(warn) > 0 {
		msg += "; " + strings.Join(warn, "; ")
	}
	return msg, left, nil
}

// restoreLedgerCopies stores again, from the copies kept beside the files or in
// .agentcanvas/tmp (or the workspace file for a new version), every version of j whose ledger
// copy is not whole. It returns the paths whose old version has no copy left.
func restoreLedgerCopies(root *os.Root, j *journal) ([]string, error) {
	objs := openObjects(root)
	defer objs.close()
	var lost []string
	for _, c := range j.Files {
		for _, v := range []struct {
			b     *LedgerBlob
			from  []string
			isOld bool
		}{{c.Before, []string{c.Tmp, c.Aside}, true}, {c.After, []string{c.Path}, false}} {
			if v.b == nil || objs.verify(v.b.OID) == nil {
				continue
			}
			s, ok := keptCopy(root, v.b, v.from...)
			if !ok {
				if v.isOld {
					lost = append(lost, c.Path)
				}
				continue
			}
			if err := objs.add([]side{s}); err != nil {
				return nil, fmt.Errorf("%s: storing its kept copy again in the ledger: %w", c.Path, err)
			}
		}
	}
	// Durable before the kept copies go.
	return lost, syncObjects(root, false)
}

// keptCopy reads the first of names that holds exactly version b.
func keptCopy(root *os.Root, b *LedgerBlob, names ...string) (side, bool) {
	for _, n := range names {
		if n == "" {
			continue
		}
		if got, err := diskBlob(root, n); err == nil && sameBlob(got, b) {
			if s, err := readSideRoot(root, n); err == nil && sameBlob(blobOf(s), b) {
				return s, true
			}
		}
	}
	return side{}, false
}

// rollbackJournal puts back every file the apply had changed, from the copy of its old version
// the apply kept (moved back: the file as it was, bits included) or else the ledger's copy,
// each checked by blob id. A file changed again since is left and named. When a file cannot be
// put back, nothing is removed: the error names what was kept, for the next try or a person.
func rollbackJournal(root *os.Root, j *journal) (string, error) {
	restored := 0
	var kept, failed []string
	objs := openObjects(root)
	defer objs.close()
	for _, c := range j.Files {
		cur, err := diskBlob(root, c.Path)
		switch {
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", c.Path, err))
			continue
		case sameBlob(cur, c.Before):
			continue // not reached yet, or already put back
		case !sameBlob(cur, c.After):
			kept = append(kept, c.Path)
			continue
		}
		if err := putBack(root, objs, c); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", c.Path, err))
			continue
		}
		restored++
	}
	if len(failed) > 0 {
		return "", fmt.Errorf("%s; kept, for the next try: the journal %s%s", strings.Join(failed, "; "), journalFile, keptCopies(root, j))
	}
	msg := fmt.Sprintf("an interrupted %s was rolled back (%d %s)", j.What, restored, plural(restored, "file put back as it was", "files put back as they were"))
	if len(kept) > 0 {
		msg += fmt.Sprintf("; left as they are, changed again since: %s", strings.Join(kept, ", "))
	}
	return msg, nil
}

// putBack restores c's old version at c.Path.
func putBack(root *os.Root, objs *objects, c journalChange) error {
	if c.Before == nil {
		return restoreSide(root, c.Path, side{}, 0) // the apply made the file
	}
	for _, n := range []string{c.Tmp, c.Aside} {
		if n == "" {
			continue
		}
		if got, err := diskBlob(root, n); err == nil && sameBlob(got, c.Before) {
			if dir := path.Dir(c.Path); dir != "." {
				if err := root.MkdirAll(dir, 0o755); err != nil { // a folder the deletion emptied
					return err
				}
			}
			return root.Rename(n, c.Path)
		}
	}
	old, err := objs.read(c.Before)
	if err != nil {
		return fmt.Errorf("no whole copy of its old version is left (%w)", err)
	}
	return restoreSide(root, c.Path, old, c.Perm)
}

// keptCopies lists, for a person, the copies of old versions j names that exist.
func keptCopies(root *os.Root, j *journal) string {
	var names []string
	for _, c := range j.Files {
		for _, n := range []string{c.Tmp, c.Aside} {
			if _, err := root.Lstat(n); n != "" && err == nil {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return " and the copies it names (" + strings.Join(names, ", ") + ")"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// readSideRoot reads p as a side (absent when it does not exist; a folder is not a version).
func readSideRoot(root *os.Root, p string) (side, error) {
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return side{}, nil
	} else if err != nil {
		return side{}, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := root.Readlink(p)
		return side{exists: true, mode: modeSymlink, data: []byte(t)}, err
	case fi.Mode().IsRegular():
		data, err := readRootCapped(root, p, maxVersionBytes)
		m := modeFile
		if fi.Mode().Perm()&0o100 != 0 {
			m = modeExec
		}
		return side{exists: true, mode: m, data: data}, err
	}
	return side{exists: true, mode: -1}, nil // a folder or other: matches no version
}

// restoreSide puts s at p (removes p when s is absent), through a temporary file under
// .agentcanvas/tmp and a rename.
func restoreSide(root *os.Root, p string, s side, perm fs.FileMode) error {
	if !s.exists {
		err := root.Remove(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if dir := path.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil { // a folder the apply's deletion emptied
			return err
		}
	}
	tmp, err := tempIn(root)
	if err != nil {
		return err
	}
	switch s.mode {
	case modeSymlink:
		err = root.Symlink(string(s.data), tmp)
	default:
		if perm == 0 {
			perm = 0o644
			if s.mode == modeExec {
				perm = 0o755
			}
		}
		err = root.WriteFile(tmp, s.data, perm)
		if err == nil {
			err = root.Chmod(tmp, perm)
		}
	}
	if err == nil {
		err = root.Rename(tmp, p)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}

// removeTemps removes the temporary files j's apply had made beside the files it changed (a
// name the journal gives that is not a temporary file of ours is left alone).
func removeTemps(root *os.Root, j *journal) {
	for _, c := range j.Files {
		if c.Tmp != "" && isTempName(c.Tmp) && path.Dir(c.Tmp) == path.Dir(c.Path) {
			root.Remove(c.Tmp)
		}
	}
}

// removeTempsIn removes the temporary files of ours (tempName's) in dir, such as the one a
// status write that a kill cut short left beside the proposal's status.json.
func removeTempsIn(root *os.Root, dir string) {
	ents, err := fs.ReadDir(root.FS(), dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Type().IsRegular() && isTempName(e.Name()) {
			root.Remove(path.Join(dir, e.Name()))
		}
	}
}

// emptyTmp removes every temporary file of an apply that did not finish.
func emptyTmp(root *os.Root) error {
	names, err := fs.ReadDir(root.FS(), tmpDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		if err := root.RemoveAll(tmpDir + "/" + n.Name()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
