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

	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

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
	var notice string
	if j != nil {
		removeTemps(root, j) // first: a folder the apply made is removed only when empty
		if _, lerr := root.Lstat(entryPath(entryID(j))); j.Entry != nil && lerr == nil {
			if j.Finish != nil && j.Finish.Proposal != "" {
				removeTempsIn(root, path.Dir(j.Finish.Proposal)) // a status write cut short
			}
			notice = finishJournal(workspace, j)
		} else if notice, err = rollbackJournal(root, j); err != nil {
			return "", fmt.Errorf("an interrupted %s could not be recovered (the journal %s stays for the next try): %w", j.What, journalFile, err)
		}
	}
	if err := emptyTmp(root); err != nil {
		return notice, err
	}
	if j != nil {
		return notice, removeJournal(root)
	}
	return notice, nil
}

func entryID(j *journal) string {
	if j.Entry == nil {
		return "-"
	}
	return j.Entry.ID
}

// finishJournal writes what an apply past its commit point had still to write.
func finishJournal(workspace string, j *journal) string {
	if j.Finish != nil {
		if j.Finish.Fields == nil {
			j.Finish.Fields = map[string]any{}
		}
		j.Finish.Fields["recovered"] = true
	}
	msg := fmt.Sprintf("an interrupted %s was finished: it had been applied and recorded in the ledger (entry %s)", j.What, j.Entry.ID)
	if warn := finishRecord(workspace, j.Finish, nil); len(warn) > 0 {
		msg += "; " + strings.Join(warn, "; ")
	}
	return msg
}

// rollbackJournal puts back every file the apply had changed, then removes the folders it made.
func rollbackJournal(root *os.Root, j *journal) (string, error) {
	restored := 0
	var kept []string
	objs := openObjects(root)
	defer objs.close()
	for _, c := range j.Files {
		cur, err := readSideRoot(root, c.Path)
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.Path, err)
		}
		switch {
		case sameBlob(cur, c.Before):
			continue // not reached yet, or already put back
		case !sameBlob(cur, c.After):
			kept = append(kept, c.Path)
			continue
		}
		old, err := objs.read(c.Before)
		if err != nil {
			return "", fmt.Errorf("%s: %w", c.Path, err)
		}
		if err := restoreSide(root, c.Path, old, c.Perm); err != nil {
			return "", fmt.Errorf("%s: %w", c.Path, err)
		}
		restored++
	}
	for i := len(j.Dirs) - 1; i >= 0; i-- {
		root.Remove(j.Dirs[i]) // only while empty: a folder someone filled since stays
	}
	msg := fmt.Sprintf("an interrupted %s was rolled back (%d %s)", j.What, restored, plural(restored, "file put back as it was", "files put back as they were"))
	if len(kept) > 0 {
		msg += fmt.Sprintf("; left as they are, changed again since: %s", strings.Join(kept, ", "))
	}
	return msg, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sameBlob says whether s is the version b names (nil: absent).
func sameBlob(s side, b *LedgerBlob) bool {
	if b == nil || !s.exists {
		return b == nil && !s.exists
	}
	return blobOf(s).OID == b.OID && blobOf(s).Mode == b.Mode
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
		data, err := readRootCapped(root, p, MaxPatchBytes)
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
