package proposal

// The apply journal: an apply (or a revert) writes what it is about to do to
// .agentcanvas/journal.json, durably, before the first file of the workspace changes, and
// removes it when everything is done. Every file's version before and after is a ledger object
// (content-addressed, written before the journal), so an apply cut short at any step can be
// taken back out exactly, or its bookkeeping finished (recover.go). The commit point is the
// ledger entry: written after the last workspace file, before the status and the event.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

const (
	journalFile = ".agentcanvas/journal.json"
	// tmpDir holds every temporary file of an apply (never the user's folders); recovery
	// empties it.
	tmpDir         = ".agentcanvas/tmp"
	journalVersion = 1
)

// journal is what an apply in progress is doing.
type journal struct {
	Version int    `json:"version"`
	Pid     int    `json:"pid"`
	Started string `json:"started"`
	What    string `json:"what"` // "apply of coder's proposal (run r1)"
	// Entry is the ledger entry the apply writes last (its files name every version by blob
	// id); nil for a patch applied without a ledger.
	Entry *LedgerEntry    `json:"entry,omitempty"`
	Files []journalChange `json:"files"`
	// Dirs are the folders the apply creates (absent when it was planned), parents first.
	Dirs   []string       `json:"dirs,omitempty"`
	Finish *journalFinish `json:"finish,omitempty"`
}

// journalChange is one path: its version before and after (nil: absent).
type journalChange struct {
	Path   string      `json:"path"`
	Perm   fs.FileMode `json:"perm,omitempty"` // the permission bits before (a ledger mode has only the exec bit)
	Before *LedgerBlob `json:"before"`
	After  *LedgerBlob `json:"after"`
	// Tmp is the temporary file of the new version, beside Path, that recovery removes. Once
	// the new version is swapped in, it holds the old one.
	Tmp string `json:"tmp,omitempty"`
	// Aside is where the old version is kept, under .agentcanvas/tmp, when it is not swapped
	// out to Tmp (a deletion; a file system that cannot swap).
	Aside string `json:"aside,omitempty"`
}

// journalFinish is the bookkeeping after the commit point: the proposal's status and the
// event, which recovery writes again when the apply was cut short after its ledger entry.
type journalFinish struct {
	Proposal string         `json:"proposal,omitempty"` // workspace-relative proposal.json
	Status   *Status        `json:"status,omitempty"`
	Flow     string         `json:"flow,omitempty"`
	Event    string         `json:"event"`
	Fields   map[string]any `json:"fields"`
}

// newJournal describes pl (whose changes are cs): every change by blob id, and the folders it
// will create.
func newJournal(d *dirs, pl *plan, cs *versionSet, what string, e *LedgerEntry) *journal {
	j := &journal{Version: journalVersion, Pid: os.Getpid(), Started: time.Now().UTC().Format(timeLayout), What: what, Entry: e}
	tmps := make(map[string]string, len(pl.writes))
	asides := make(map[string]string, len(pl.writes)+len(pl.deletes))
	for _, w := range pl.writes {
		tmps[w.path], asides[w.path] = w.tmp, w.aside
	}
	for _, d := range pl.deletes {
		asides[d.path] = d.aside // a deletion then a creation of the path: the deletion's
	}
	j.Files = make([]journalChange, 0, len(cs.paths))
	for _, p := range cs.paths {
		b := cs.blobs[p]
		j.Files = append(j.Files, journalChange{Path: p, Perm: cs.perms[p], Before: b[0], After: b[1], Tmp: tmps[p], Aside: asides[p]})
	}
	seen := map[string]bool{}
	for _, w := range pl.writes {
		var missing []string
		for dir := path.Dir(w.path); dir != "." && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			if d.has(dir) {
				break // opened by the check: it exists, and so do its parents
			}
			if _, err := d.lstat(dir); errors.Is(err, fs.ErrNotExist) {
				missing = append(missing, dir)
			}
		}
		for i := len(missing) - 1; i >= 0; i-- {
			j.Dirs = append(j.Dirs, missing[i])
		}
	}
	return j
}

// storeObjects stores every version the plan's journal names as a ledger object (once: a
// version already stored is not written again). They are not synced: a process killed at any
// step leaves them whole in the page cache; a machine that loses power may lose the last seconds
// of them (docs/proposals.md says what then).
func storeObjects(root *os.Root, cs *versionSet) error {
	objs := openObjects(root)
	defer objs.close()
	versions := make([]object, 0, 2*len(cs.paths))
	for _, p := range cs.paths {
		b := cs.blobs[p]
		if b[0] != nil {
			versions = append(versions, object{b[0].OID, cs.before[p].data})
		}
		if b[1] != nil {
			versions = append(versions, object{b[1].OID, cs.after[p].data})
		}
	}
	if err := objs.addObjects(versions); err != nil {
		return fmt.Errorf("the ledger's copies of the versions: %w", err)
	}
	return nil
}

// write puts the journal in place durably: temporary file, fsync, rename, fsync the folder.
func (j *journal) write(root *os.Root) error {
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	return writeDurable(root, journalFile, append(b, '\n'))
}

// writeDurable writes name through a temporary file under .agentcanvas/tmp, synced before
// the rename and with the folder synced after it.
func writeDurable(root *os.Root, name string, data []byte) error {
	tmp, err := tempIn(root)
	if err != nil {
		return err
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return err
	}
	return syncDir(root, path.Dir(name))
}

// removeJournal marks the apply done. Not synced: a removal lost to a power cut only makes the
// next command finish the apply again (its status once more, its event twice).
func removeJournal(root *os.Root) error {
	if err := root.Remove(journalFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// readJournal reads an unfinished journal; nil when there is none.
func readJournal(root *os.Root) (*journal, error) {
	b, err := readRootCapped(root, journalFile, maxRecordBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("%s: %w", journalFile, err)
	}
	if j.Version != journalVersion {
		return nil, fmt.Errorf("%s: version %d, this agentcanvas reads %d", journalFile, j.Version, journalVersion)
	}
	return &j, nil
}

// tempIn is a fresh temporary name under .agentcanvas/tmp (created when missing).
func tempIn(root *os.Root) (string, error) {
	if err := root.MkdirAll(tmpDir, 0o755); err != nil {
		return "", err
	}
	return tempName(tmpDir + "/x"), nil
}

// needSpace is about what the apply writes, each file rounded up to whole blocks of bs: the
// new files (beside the old ones until each rename) and the ledger's copies of both versions,
// with room for the journal and the entry.
func needSpace(pl *plan, bs int64) int64 {
	blocks := func(n int) int64 { return (int64(n) + bs - 1) / bs * bs }
	n := 16 * bs
	for _, w := range pl.writes {
		n += 2 * blocks(len(w.data))
		if w.old != nil {
			n += blocks(len(w.old.data))
		}
	}
	for _, d := range pl.deletes {
		if d.old != nil {
			n += blocks(len(d.old.data))
		}
	}
	return n
}

// checkSpace refuses an apply the disk has no room for, before anything is written.
func checkSpace(root *os.Root, workspace string, pl *plan) error {
	free, bs := freeSpace(root)
	if free < 0 || os.Getenv(testNoSpaceCheckEnv) != "" {
		return nil
	}
	if need := needSpace(pl, bs); free < need {
		return fmt.Errorf("not enough free space: the apply needs about %s (the new files and the ledger's copies of both versions) and the disk of %s has %s free; nothing was changed", byteSize(need), workspace, byteSize(free))
	}
	return nil
}

// byteSize prints n for a person: 512 B, 12.3 KB, 4.5 MB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

// describeProposal names a proposal for a person: "coder's proposal (run r1)".
func describeProposal(e *LedgerEntry, fallback string) string {
	switch {
	case e != nil && e.AgentID != "":
		return fmt.Sprintf("%s's proposal (run %s)", e.AgentID, e.RunID)
	case e != nil && e.Proposal != "":
		return e.Proposal
	}
	return strings.TrimSpace(fallback)
}
