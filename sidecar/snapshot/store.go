package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// Dir is the workspace-relative folder of the store.
const Dir = ".agentcanvas/snapshots"

const packsDir = "packs"

// MaxInMemory is the size up to which an object is read whole; bigger blobs are streamed.
const MaxInMemory = 1 << 20

// Store reads objects from every pack of a workspace and appends to its own (writer's).
// Its methods are safe for concurrent use.
type Store struct {
	root *os.Root // the store's folder
	name string   // the pack this store appends to; "" reads only

	mu    sync.Mutex
	index map[ID]loc
	packs map[string]*os.File // open for reading, by pack name
	w     *packWriter         // opened on the first write
}

// loc is where one object's bytes are.
type loc struct {
	pack      string
	off, size int64
	kind      Kind
}

// Open opens the workspace's store; writer names the pack its writes go to (a run id), ""
// for a store that only reads. The folder is made when missing.
func Open(workspace, writer string) (*Store, error) {
	if writer != "" {
		if err := sandbox.ValidateRunID(writer); err != nil {
			return nil, fmt.Errorf("snapshot store: writer: %w", err)
		}
	}
	ws, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	if err := ws.MkdirAll(path.Join(Dir, packsDir), 0o700); err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	root, err := ws.OpenRoot(Dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot store: %w", err)
	}
	s := &Store{root: root, name: writer, packs: map[string]*os.File{}}
	if err := s.loadIndex(); err != nil {
		root.Close()
		return nil, err
	}
	return s, nil
}

// Close writes out what is pending and releases the files.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.commitLocked()
	for _, f := range s.packs {
		f.Close()
	}
	if s.w != nil {
		err = errors.Join(err, s.w.close())
	}
	return errors.Join(err, s.root.Close())
}

// loadIndex reads every pack's index: its whole, well-formed lines (a torn last line is an
// append a kill cut short).
func (s *Store) loadIndex() error {
	entries, err := fs.ReadDir(s.root.FS(), packsDir)
	if err != nil {
		return fmt.Errorf("snapshot store: %w", err)
	}
	index := map[ID]loc{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !e.Type().IsRegular() || sandbox.ValidateRunID(name) != nil {
			continue
		}
		b, err := s.root.ReadFile(path.Join(packsDir, e.Name()))
		if err != nil {
			return fmt.Errorf("snapshot store: %w", err)
		}
		for id, l := range parseIndex(name, b) {
			index[id] = l
		}
	}
	if s.w != nil { // this store's own objects, some not in its index file yet
		for id, l := range s.index {
			if l.pack == s.name {
				index[id] = l
			}
		}
	}
	s.index = index
	return nil
}

// parseIndex reads an index file's whole lines.
func parseIndex(pack string, b []byte) map[ID]loc {
	out := map[ID]loc{}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		f := strings.Fields(string(line))
		if len(f) != 4 || len(f[1]) != 1 || (f[1][0] != byte(Blob) && f[1][0] != byte(Tree)) {
			continue
		}
		id, err := ParseID(f[0])
		off, err1 := strconv.ParseInt(f[2], 10, 64)
		size, err2 := strconv.ParseInt(f[3], 10, 64)
		if err != nil || err1 != nil || err2 != nil || off < 0 || size < 0 {
			continue
		}
		out[id] = loc{pack: pack, off: off, size: size, kind: Kind(f[1][0])}
	}
	return out
}

// Has reports whether the store holds id (it may still be damaged: Read checks).
func (s *Store) Has(id ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.index[id]
	return ok
}

// ErrMissing is wrapped by reads of an object the store does not hold.
var ErrMissing = errors.New("not in the snapshot store")

// find locates id, reading the indexes again once when it is not known: another run may have
// written it since.
func (s *Store) find(id ID) (loc, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.index[id]
	if !ok {
		if err := s.loadIndex(); err != nil {
			return loc{}, err
		}
		if l, ok = s.index[id]; !ok {
			return loc{}, fmt.Errorf("object %s: %w", id, ErrMissing)
		}
	}
	if s.w != nil && l.pack == s.name {
		if err := s.w.flush(); err != nil { // its bytes may still be in the write buffer
			return loc{}, err
		}
	}
	return l, nil
}

// reader is the open pack name.
func (s *Store) reader(name string) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.packs[name]; ok {
		return f, nil
	}
	f, err := s.root.Open(path.Join(packsDir, name+".pack"))
	if err != nil {
		return nil, err
	}
	s.packs[name] = f
	return f, nil
}

// DamagedError says an object's bytes in the store do not have its id.
type DamagedError struct {
	ID   ID
	Pack string
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("object %s in %s is damaged (its bytes have another id)", e.ID, filepath.ToSlash(path.Join(Dir, packsDir, e.Pack+".pack")))
}

// Read returns an object's kind and bytes, checked against its id. Objects over MaxInMemory
// are refused here; CopyBlob streams them.
func (s *Store) Read(id ID) (Kind, []byte, error) {
	l, err := s.find(id)
	if err != nil {
		return 0, nil, err
	}
	if l.size > MaxInMemory {
		return 0, nil, fmt.Errorf("object %s is %d bytes: read it as a stream", id, l.size)
	}
	f, err := s.reader(l.pack)
	if err != nil {
		return 0, nil, err
	}
	data := make([]byte, l.size)
	if _, err := f.ReadAt(data, l.off); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, nil, &DamagedError{ID: id, Pack: l.pack}
		}
		return 0, nil, err
	}
	if Sum(l.kind, data) != id {
		return 0, nil, &DamagedError{ID: id, Pack: l.pack}
	}
	return l.kind, data, nil
}

// ReadTree returns a tree's entries.
func (s *Store) ReadTree(id ID) ([]Entry, error) {
	k, data, err := s.Read(id)
	if err != nil {
		return nil, err
	}
	if k != Tree {
		return nil, fmt.Errorf("object %s is not a tree", id)
	}
	es, err := decodeTree(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", id, err)
	}
	return es, nil
}

// CopyBlob writes a blob's bytes to w, checking its id as they go; on a mismatch w has
// received damaged bytes and the error says so (the caller discards what it wrote).
func (s *Store) CopyBlob(id ID, w io.Writer) (int64, error) {
	l, err := s.find(id)
	if err != nil {
		return 0, err
	}
	if l.kind != Blob {
		return 0, fmt.Errorf("object %s is not a blob", id)
	}
	f, err := s.reader(l.pack)
	if err != nil {
		return 0, err
	}
	h := hasher(Blob, l.size)
	n, err := io.Copy(io.MultiWriter(w, h), io.NewSectionReader(f, l.off, l.size))
	if err != nil {
		return n, err
	}
	var got ID
	h.Sum(got[:0])
	if n != l.size || got != id {
		return n, &DamagedError{ID: id, Pack: l.pack}
	}
	return n, nil
}

// Size is a blob's size in bytes.
func (s *Store) Size(id ID) (int64, error) {
	l, err := s.find(id)
	return l.size, err
}
