package proposal

// The ledger's objects: the exact bytes of every version of a file that a ledger entry or a
// journal names, by git blob id. They are appended, once each, to one pack file
// (.agentcanvas/ledger/objects/pack), and its index (objects/pack.idx) has one line per object:
// "<blob id> <offset> <size>".
//
// Why a pack rather than a file per version (git's loose objects, which this store wrote
// before): making a file, an inode, is the dearest step of an apply on ext4, and an apply of 100
// files made 200 of them and their fan-out folders. Appending to two files makes none.
//
// Every write happens under the workspace lock, so the pack has one writer. Readers need no
// lock: an object's index line is appended only after its bytes. A kill or a full disk in the
// middle of an append leaves a tail that no whole index line names; the next writer cuts the
// index back to its last whole line (a line cut short could name the wrong size) and the pack
// back to its end before appending. Every read checks the blob id, so a damaged copy is reported,
// never returned. Loose objects (objects/<2 hex>/<38 hex>) left by earlier versions are still read.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
)

const (
	packFile  = ledgerObjects + "/pack"
	packIndex = ledgerObjects + "/pack.idx"
	// maxPackIndexBytes bounds the index read whole: about 16 million versions.
	maxPackIndexBytes = 1 << 30
)

// packEntry is where one object's bytes are in the pack.
type packEntry struct{ off, size int64 }

// objects reads ledger objects and, under the workspace lock, adds them. Close it.
type objects struct {
	root    *os.Root
	index   map[string]packEntry // loaded on first use
	idxLen  int64                // the index's length up to its last whole line
	pack    *os.File             // opened for reading on first use
	loadErr error
}

func openObjects(root *os.Root) *objects { return &objects{root: root} }

func (o *objects) close() {
	if o.pack != nil {
		o.pack.Close()
	}
}

// load reads the index: its whole lines, each well formed, the last one for an id winning.
func (o *objects) load() error {
	if o.index != nil || o.loadErr != nil {
		return o.loadErr
	}
	b, err := readRootCapped(o.root, packIndex, maxPackIndexBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		o.loadErr = fmt.Errorf("the ledger's object index: %w", err)
		return o.loadErr
	}
	whole := bytes.LastIndexByte(b, '\n') + 1
	o.idxLen = int64(whole)
	o.index = make(map[string]packEntry, whole/60)
	for line := range bytes.SplitSeq(b[:whole], []byte{'\n'}) {
		if oid, e, ok := parseIndexLine(line); ok {
			o.index[oid] = e
		}
	}
	return nil
}

// parseIndexLine reads "<blob id> <offset> <size>"; a line that is not one is skipped (the
// read of an object it would have named checks the blob id anyway).
func parseIndexLine(line []byte) (string, packEntry, bool) {
	f := bytes.Fields(line)
	if len(f) != 3 || !isFullOID(string(f[0])) {
		return "", packEntry{}, false
	}
	off, err1 := strconv.ParseInt(string(f[1]), 10, 64)
	size, err2 := strconv.ParseInt(string(f[2]), 10, 64)
	if err1 != nil || err2 != nil || off < 0 || size < 0 || size > maxVersionBytes {
		return "", packEntry{}, false
	}
	return string(f[0]), packEntry{off, size}, true
}

// read returns a version's bytes, checking its blob id; nil b is an absent file.
func (o *objects) read(b *LedgerBlob) (side, error) {
	if b == nil {
		return side{}, nil
	}
	if !isFullOID(b.OID) {
		return side{}, fmt.Errorf("the ledger names an invalid blob id %q", b.OID)
	}
	data, err := o.readData(b.OID)
	if err != nil {
		return side{}, fmt.Errorf("the ledger's copy of %s: %w", b.OID, err)
	}
	if blobOID(data) != b.OID {
		return side{}, fmt.Errorf("the ledger's copy of %s is damaged (its content has another blob id)", b.OID)
	}
	m := modeFile
	switch b.Mode {
	case "100755":
		m = modeExec
	case "120000":
		m = modeSymlink
	}
	return side{exists: true, mode: m, data: data}, nil
}

// readData finds oid in the pack, or else as a loose object.
func (o *objects) readData(oid string) ([]byte, error) {
	if err := o.load(); err != nil {
		return nil, err
	}
	e, ok := o.index[oid]
	if !ok {
		return readRootCapped(o.root, objectPath(oid), maxVersionBytes)
	}
	if err := o.openPack(e); err != nil {
		return nil, err
	}
	data := make([]byte, e.size)
	if _, err := o.pack.ReadAt(data, e.off); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("the pack ends before it (offset %d, %d bytes)", e.off, e.size)
		}
		return nil, err
	}
	return data, nil
}

// openPack opens the pack for reading, once, and checks e lies inside it: an index line is
// never trusted for more bytes than the pack has.
func (o *objects) openPack(e packEntry) error {
	if o.pack == nil {
		f, err := o.root.Open(packFile)
		if err != nil {
			return err
		}
		o.pack = f
	}
	fi, err := o.pack.Stat()
	if err != nil {
		return err
	}
	if e.off > fi.Size() || e.size > fi.Size()-e.off {
		return fmt.Errorf("the pack ends before it (offset %d, %d bytes; the pack has %d)", e.off, e.size, fi.Size())
	}
	return nil
}

// verify says whether the stored copy of oid is whole: its bytes hash to oid. It reads the
// copy a block at a time.
func (o *objects) verify(oid string) error {
	if err := o.load(); err != nil {
		return err
	}
	var r io.Reader
	var size int64
	if e, ok := o.index[oid]; ok {
		if err := o.openPack(e); err != nil {
			return err
		}
		r, size = io.NewSectionReader(o.pack, e.off, e.size), e.size
	} else {
		f, err := o.root.OpenFile(objectPath(oid), os.O_RDONLY|noFollow, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		r, size = f, fi.Size()
	}
	h := blobHasher(size)
	if n, err := io.CopyBuffer(h, io.LimitReader(r, size), make([]byte, min(streamBlock, size+1))); err != nil {
		return err
	} else if n != size {
		return fmt.Errorf("the ledger's copy of %s is cut short", oid)
	}
	if hex.EncodeToString(h.Sum(nil)) != oid {
		return fmt.Errorf("the ledger's copy of %s is damaged (its content has another blob id)", oid)
	}
	return nil
}

// objectPath is where a loose object is.
func objectPath(oid string) string { return ledgerObjects + "/" + oid[:2] + "/" + oid[2:] }

// add stores each version not stored yet: its bytes appended to the pack, then its index line.
// The caller holds the workspace lock. After an error nothing the index names has changed.
func (o *objects) add(versions []side) error {
	var objs []object
	for _, s := range versions {
		if s.exists {
			objs = append(objs, object{blobOID(s.data), s.data})
		}
	}
	return o.addObjects(objs)
}

// addObjects is add with the blob ids known.
func (o *objects) addObjects(versions []object) error {
	if err := o.load(); err != nil {
		return err
	}
	var fresh []object
	seen := map[string]bool{}
	for _, v := range versions {
		if seen[v.oid] {
			continue
		}
		if _, ok := o.index[v.oid]; ok && o.verify(v.oid) == nil {
			continue // stored already, and whole: a damaged copy is stored again
		}
		seen[v.oid] = true
		fresh = append(fresh, v)
	}
	if len(fresh) == 0 {
		return nil
	}
	if err := o.root.MkdirAll(ledgerObjects, 0o755); err != nil {
		return err
	}
	start, err := o.appendPack(fresh)
	if err != nil {
		return err
	}
	return o.appendIndex(fresh, start)
}

// object is a version to store, by its blob id.
type object struct {
	oid  string
	data []byte
}

// appendPack writes the versions' bytes at the pack's end, which it returns. A failed append
// is cut off again (a full disk gets its space back).
func (o *objects) appendPack(vs []object) (int64, error) {
	f, err := o.root.OpenFile(packFile, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, v := range vs {
		if _, err = w.Write(v.data); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Truncate(start)
		return 0, fmt.Errorf("%s: %w", packFile, err)
	}
	return start, nil
}

// appendIndex writes an index line per version, after the index's last whole line.
func (o *objects) appendIndex(vs []object, start int64) error {
	var b bytes.Buffer
	off := start
	entries := make(map[string]packEntry, len(vs))
	for _, v := range vs {
		e := packEntry{off, int64(len(v.data))}
		fmt.Fprintf(&b, "%s %d %d\n", v.oid, e.off, e.size)
		entries[v.oid] = e
		off += e.size
	}
	f, err := o.root.OpenFile(packIndex, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err = f.Truncate(o.idxLen); err == nil { // a line cut short by a kill
		_, err = f.WriteAt(b.Bytes(), o.idxLen)
	}
	if err != nil {
		f.Truncate(o.idxLen)
		return fmt.Errorf("%s: %w", packIndex, err)
	}
	o.idxLen += int64(b.Len())
	for oid, e := range entries {
		o.index[oid] = e
	}
	return nil
}

// syncObjects makes the pack and its index durable, or, with start, starts their writeback
// without waiting. An apply syncs them before its commit point: past it, the copies of the old
// versions the apply kept aside are removed, and the ledger's are then the only ones a revert
// has (a power loss would otherwise take the pack's last bytes with it).
func syncObjects(root *os.Root, start bool) error {
	for _, name := range []string{packFile, packIndex} {
		f, err := root.OpenFile(name, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		if start {
			startFileWriteback(f)
		} else {
			err = datasync(f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// ReadLedgerObject returns the bytes of a version a ledger entry names, checked against its
// blob id.
func ReadLedgerObject(workspace string, b *LedgerBlob) ([]byte, error) {
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	objs := openObjects(root)
	defer objs.close()
	s, err := objs.read(b)
	return s.data, err
}
