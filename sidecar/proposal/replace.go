package proposal

// The apply's last phase, writing the new versions, in two passes: every new version is first
// written whole to its temporary file beside its target (and the folders it needs made), then
// each is put in place, checked at the last moment, by a swap or a rename. Two passes rather
// than one file at a time so that the writeback of each replacing file (startWriteback, which
// keeps it whole across a power loss) runs on another thread while the next one is written.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// writeAll writes ws in order; after an error no temporary file holding a new version is left
// (the rollback's undo steps put back what was placed).
func (t *txn) writeAll(ws []write) error {
	staged := make([]bool, len(ws)) // its temporary file holds the new version
	err := t.stageAll(ws, staged)
	for i := 0; err == nil && i < len(ws); i++ {
		if err = t.place(ws[i], staged[i]); err != nil {
			err = fmt.Errorf("writing %s: %w", ws[i].path, err)
			break
		}
		staged[i] = false // its temporary name is gone, or holds the old version for the rollback
	}
	if err != nil {
		for i, w := range ws {
			if staged[i] {
				t.dirs.remove(w.tmp)
			}
		}
	}
	return err
}

// stageAll writes every new version to its temporary file; staged says which were written.
func (t *txn) stageAll(ws []write, staged []bool) error {
	fl := &flusher{}
	var err error
	for i, w := range ws {
		if err = t.mkdirs(path.Dir(w.path)); err != nil {
			break
		}
		if staged[i], err = t.stage(w, fl); err != nil {
			err = fmt.Errorf("writing %s: %w", w.path, err)
			break
		}
	}
	if ferr := fl.wait(); err == nil {
		err = ferr
	}
	return err
}

// sameContent: w leaves the file's bytes as they are (at most its permission bits change).
func sameContent(w write) bool {
	return w.kind == kindFile && w.old != nil && w.old.kind == kindFile && bytes.Equal(w.data, w.old.data)
}

// stage writes w's new version to w.tmp; false when there is none to write (sameContent).
// A file that will be swapped in is handed to fl to start its writeback and close it.
func (t *txn) stage(w write, fl *flusher) (staged bool, err error) {
	if sameContent(w) {
		return false, nil
	}
	if w.kind == kindSymlink {
		if err := t.step(OpSymlink, w.path); err != nil {
			return false, err
		}
		if err := t.dirs.symlink(string(w.data), w.tmp); err != nil {
			return false, err
		}
		return true, nil
	}
	perm := filePerm(w, w.old)
	f, err := t.dirs.create(w.tmp, perm)
	if err != nil {
		return false, err
	}
	if t.stepping() { // half the data, then the hook: a disk that fills up mid-file
		half := len(w.data) / 2
		_, err = f.Write(w.data[:half])
		if err == nil {
			err = t.step(OpWrite, w.path)
		}
		if err == nil {
			_, err = f.Write(w.data[half:])
		}
	} else {
		_, err = f.Write(w.data)
	}
	if err == nil {
		err = f.Chmod(perm) // exact bits, whatever the umask
	}
	if err != nil {
		f.Close()
		t.dirs.remove(w.tmp)
		return false, err
	}
	if t.swaps(w.old) {
		fl.add(w.path, f)
		return true, nil
	}
	return true, f.Close()
}

// place puts w's new version in place: a chmod when only the bits change, else the staged
// temporary file swapped or renamed over the target.
func (t *txn) place(w write, staged bool) error {
	old := w.old
	if !staged {
		return t.chmodOnly(w)
	}
	if err := t.step(OpRename, w.path); err != nil {
		return err
	}
	if err := t.unchanged(w.path, old); err != nil {
		return err
	}
	if swapped, err := t.swapIn(w.tmp, w, old); swapped || err != nil {
		return err
	}
	aside := t.keepAside(w.path, w.aside, old)
	if err := t.dirs.moveInto(w.tmp, w.path); err != nil {
		if aside != "" {
			t.dirs.remove(aside)
		}
		return err
	}
	t.undoReplace(w.path, old, aside, writtenSide(w))
	return nil
}

// chmodOnly sets the bits of a file whose content stays (itself atomic), if they change.
func (t *txn) chmodOnly(w write) error {
	old := w.old
	perm := filePerm(w, old)
	if !sameContent(w) || perm == old.perm {
		return nil // nothing changes (a selection left the file as it is)
	}
	if err := t.step(OpChmod, w.path); err != nil {
		return err
	}
	if err := t.unchanged(w.path, old); err != nil {
		return err
	}
	if err := t.dirs.chmod(w.path, perm); err != nil {
		return err
	}
	t.undo = append(t.undo, func() error { return t.dirs.chmod(w.path, old.perm) })
	return nil
}

// flusher starts the writeback of written files and closes them, on its own goroutine.
type flusher struct {
	jobs chan flushJob
	done chan struct{}
	err  error // the first; read after done
}

type flushJob struct {
	name string
	f    writeFile
}

func (fl *flusher) add(name string, f writeFile) {
	if fl.jobs == nil {
		fl.jobs, fl.done = make(chan flushJob, 64), make(chan struct{})
		go fl.run()
	}
	fl.jobs <- flushJob{name, f}
}

func (fl *flusher) run() {
	defer close(fl.done)
	for j := range fl.jobs {
		err := startWriteback(j.f)
		if cerr := j.f.Close(); err == nil {
			err = cerr
		}
		if err != nil && fl.err == nil {
			fl.err = fmt.Errorf("writing %s: %w", j.name, err)
		}
	}
}

// wait returns once every file added is closed, with the first error.
func (fl *flusher) wait() error {
	if fl.jobs == nil {
		return nil
	}
	close(fl.jobs)
	<-fl.done
	return fl.err
}

// swapIn puts the new version (at tmp) in place of an existing file or symlink by swapping the
// two names: tmp then holds the old one, kept for a rollback until the apply stands. false
// when the file system cannot swap, or there is nothing to swap with.
func (t *txn) swapIn(tmp string, w write, old *backup) (bool, error) {
	if !t.swaps(old) {
		return false, nil
	}
	err := t.dirs.exchange(tmp, w.path)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return false, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("%s: it was removed while the apply ran", w.path)
	case err != nil:
		return false, err
	}
	t.aside = append(t.aside, tmp)
	t.undoReplace(w.path, old, tmp, writtenSide(w))
	return true, nil
}

// swaps says whether the new version of a file that was old is swapped in (else renamed).
func (t *txn) swaps(old *backup) bool {
	return !noSwap && old != nil && (old.kind == kindFile || old.kind == kindSymlink)
}

// noSwap makes every apply link and rename, as on a file system that cannot swap (tests).
var noSwap bool

// keepAside hard-links the file about to be replaced into .agentcanvas/tmp, so undoing the
// replace is a rename that needs no free space (a full disk is the usual reason to undo);
// "" when there is nothing, or no link could be made (then the undo rewrites it).
func (t *txn) keepAside(p, aside string, old *backup) string {
	if old == nil || aside == "" {
		return ""
	}
	if t.dirs.linkAside(p, aside) != nil {
		return ""
	}
	t.aside = append(t.aside, aside)
	return aside
}

// undoReplace records how to put back what was at p before it was replaced by wrote (absent
// for a deletion). The undo first checks p is still what the apply left there: a file saved
// (or made) by someone else meanwhile is left as it is, and the rollback says so.
func (t *txn) undoReplace(p string, old *backup, aside string, wrote side) {
	t.undo = append(t.undo, func() error {
		if same, err := diskIs(rootFS{t.root}, p, wrote); err != nil || !same {
			return fmt.Errorf("%s changed again during the apply; left as it is", p)
		}
		if aside != "" {
			return t.root.Rename(aside, p)
		}
		return t.restore(p, old)
	})
}

// removeKeeping deletes p by moving it into .agentcanvas/tmp (undone by moving it back),
// or, where that cannot be done, by removing it (undone from the backup).
func (t *txn) removeKeeping(p, aside string, old *backup) error {
	if aside != "" && t.dirs.moveInto(p, aside) == nil {
		t.aside = append(t.aside, aside)
		t.undoReplace(p, old, aside, side{})
		return nil
	}
	if err := t.dirs.remove(p); err != nil {
		return err
	}
	t.undoReplace(p, old, "", side{})
	return nil
}

// dropAside removes the old files kept for a rollback, once the apply stands. Each unlink
// frees a file's blocks, most of an apply's kernel time; dirs.removeMany spreads them over
// threads.
func (t *txn) dropAside() {
	t.dirs.removeMany(t.aside)
	t.aside = nil
}

// writtenSide is what put leaves at w.path.
func writtenSide(w write) side {
	m := modeFile
	switch {
	case w.kind == kindSymlink:
		m = modeSymlink
	case w.exec:
		m = modeExec
	}
	return side{exists: true, mode: m, data: w.data}
}

// filePerm: a modified file keeps its permission bits, only the executable bits follow the
// patch; a new file is 0644 or 0755.
func filePerm(w write, old *backup) fs.FileMode {
	perm := fs.FileMode(0o644)
	if old != nil && old.kind == kindFile {
		perm = old.perm
	} else if w.perm != 0 {
		perm = w.perm
	}
	if w.exec && perm&0o100 == 0 {
		perm |= (perm & 0o444) >> 2
	} else if !w.exec {
		perm &^= 0o111
	}
	return perm
}
