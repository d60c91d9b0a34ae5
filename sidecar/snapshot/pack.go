package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
)

// packWriter appends objects to the store's own pack. Small objects gather in a buffer that
// is written when it fills, before a big object and before a read of one of them; the index
// lines follow at Commit, after the bytes they name. Called with Store.mu held.
type packWriter struct {
	pack, idx *os.File
	end       int64 // the pack's end, buffered bytes included
	written   int64 // the pack's end on disk
	buf       bytes.Buffer
	lines     bytes.Buffer // index lines not yet written
	idxLen    int64
}

const writeBuffer = 1 << 20

// openWriter opens (or makes) the store's own pack and index and cuts off what a kill left
// half-written: the index after its last whole line, the pack after the last object it names.
func (s *Store) openWriter() (*packWriter, error) {
	if s.name == "" {
		return nil, fmt.Errorf("snapshot store opened to read only")
	}
	base := path.Join(packsDir, s.name)
	idx, err := s.root.OpenFile(base+".idx", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	pack, err := s.root.OpenFile(base+".pack", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		idx.Close()
		return nil, err
	}
	w := &packWriter{pack: pack, idx: idx}
	b, err := io.ReadAll(idx)
	if err == nil {
		w.idxLen = int64(bytes.LastIndexByte(b, '\n') + 1)
		for _, l := range parseIndex(s.name, b) {
			w.end = max(w.end, l.off+l.size)
		}
		if err = idx.Truncate(w.idxLen); err == nil {
			err = pack.Truncate(w.end)
		}
	}
	if err != nil {
		w.close()
		return nil, fmt.Errorf("snapshot store: %s: %w", base, err)
	}
	w.written = w.end
	return w, nil
}

func (w *packWriter) close() error {
	err := w.pack.Close()
	if e := w.idx.Close(); err == nil {
		err = e
	}
	return err
}

// add appends an object held in memory.
func (w *packWriter) add(id ID, k Kind, data []byte) (loc, error) {
	if w.buf.Len()+len(data) > writeBuffer {
		if err := w.flush(); err != nil {
			return loc{}, err
		}
	}
	l := loc{off: w.end, size: int64(len(data)), kind: k}
	w.buf.Write(data)
	w.end += l.size
	w.line(id, l)
	return l, nil
}

// addFrom appends a big blob read from r (size bytes, whose id is id), checking the id again
// as it is copied: a file that changed since it was hashed is refused, and cut off the pack.
func (w *packWriter) addFrom(id ID, r io.Reader, size int64) (loc, error) {
	if err := w.flush(); err != nil {
		return loc{}, err
	}
	l := loc{off: w.end, size: size, kind: Blob}
	h := hasher(Blob, size)
	n, err := io.Copy(io.MultiWriter(io.NewOffsetWriter(w.pack, w.end), h), io.LimitReader(r, size))
	var got ID
	h.Sum(got[:0])
	if err == nil && (n != size || got != id) {
		err = errChanged
	}
	if err != nil {
		w.pack.Truncate(w.end)
		return loc{}, err
	}
	w.end += size
	w.written = w.end
	w.line(id, l)
	return l, nil
}

func (w *packWriter) line(id ID, l loc) {
	w.lines.WriteString(id.String() + " " + string(l.kind) + " " + strconv.FormatInt(l.off, 10) + " " + strconv.FormatInt(l.size, 10) + "\n")
}

// flush writes the buffered bytes at the pack's end.
func (w *packWriter) flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	if _, err := w.pack.WriteAt(w.buf.Bytes(), w.written); err != nil {
		w.pack.Truncate(w.written)
		return err
	}
	w.written += int64(w.buf.Len())
	w.buf.Reset()
	return nil
}

// commit writes the bytes, then the index lines that name them.
func (w *packWriter) commit() error {
	if err := w.flush(); err != nil {
		return err
	}
	if w.lines.Len() == 0 {
		return nil
	}
	if _, err := w.idx.WriteAt(w.lines.Bytes(), w.idxLen); err != nil {
		w.idx.Truncate(w.idxLen)
		return err
	}
	w.idxLen += int64(w.lines.Len())
	w.lines.Reset()
	return nil
}

// put stores an object held in memory unless the store has it. Other stores see it after
// Commit.
func (s *Store) put(k Kind, data []byte) (ID, bool, error) {
	id := Sum(k, data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.index[id]; ok {
		return id, false, nil
	}
	if err := s.writer(); err != nil {
		return id, false, err
	}
	l, err := s.w.add(id, k, data)
	if err != nil {
		return id, false, err
	}
	l.pack = s.name
	s.index[id] = l
	return id, true, nil
}

// hashFile is the blob id of a file's first size bytes.
func hashFile(f *os.File, size int64) (ID, error) {
	h := hasher(Blob, size)
	if n, err := io.Copy(h, io.NewSectionReader(f, 0, size)); err != nil || n != size {
		if err == nil {
			err = errChanged
		}
		return ID{}, err
	}
	var id ID
	h.Sum(id[:0])
	return id, nil
}

// errChanged: a file's bytes were not those just hashed.
var errChanged = errors.New("it changed while it was being kept")

func isStoreError(err error) bool { return !errors.Is(err, errChanged) }

// putLarge stores a big file whose id is id unless the store has it: its bytes are copied
// into the pack and hashed again on the way (errChanged when they differ).
func (s *Store) putLarge(id ID, f *os.File, size int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.index[id]; ok {
		return false, nil
	}
	if err := s.writer(); err != nil {
		return false, err
	}
	l, err := s.w.addFrom(id, io.NewSectionReader(f, 0, size), size)
	if err != nil {
		return false, err
	}
	l.pack = s.name
	s.index[id] = l
	return true, nil
}

func (s *Store) writer() error {
	if s.w != nil {
		return nil
	}
	w, err := s.openWriter()
	if err != nil {
		return err
	}
	s.w = w
	return nil
}

// Commit makes what was stored visible to other stores: the buffered bytes, then their index
// lines.
func (s *Store) Commit() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commitLocked()
}

func (s *Store) commitLocked() error {
	if s.w == nil {
		return nil
	}
	return s.w.commit()
}
