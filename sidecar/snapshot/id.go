package snapshot

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"sort"
	"strconv"
)

// ID names an object: the SHA-1 of its git header and bytes, as git names it.
type ID [sha1.Size]byte

func (id ID) String() string { return hex.EncodeToString(id[:]) }

// ParseID reads 40 hex digits.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 2*len(id) {
		return id, fmt.Errorf("object id %q: not 40 hex digits", s)
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("object id %q: %w", s, err)
	}
	return id, nil
}

// MarshalText and UnmarshalText write an ID as its hex digits in JSON.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	*id = v
	return err
}

// Kind is an object's type.
type Kind byte

const (
	Blob Kind = 'b' // a file's bytes, or a symlink's target
	Tree Kind = 't' // a folder: its entries, in git's tree format
)

func (k Kind) word() string {
	if k == Tree {
		return "tree"
	}
	return "blob"
}

// hasher hashes an object of kind and size: the header first, as git does.
func hasher(k Kind, size int64) hash.Hash {
	h := sha1.New()
	h.Write([]byte(k.word() + " " + strconv.FormatInt(size, 10) + "\x00"))
	return h
}

// Sum is the id of an object of kind with data.
func Sum(k Kind, data []byte) ID {
	h := hasher(k, int64(len(data)))
	h.Write(data)
	var id ID
	h.Sum(id[:0])
	return id
}

// EmptyTree is the id of a folder with nothing in it.
var EmptyTree = Sum(Tree, nil)

// Modes of tree entries, as git writes them.
const (
	ModeFile    = "100644"
	ModeExec    = "100755"
	ModeSymlink = "120000"
	ModeDir     = "40000"
)

// Entry is one name in a tree.
type Entry struct {
	Name string
	Mode string
	ID   ID
}

// IsDir reports whether the entry is a folder.
func (e Entry) IsDir() bool { return e.Mode == ModeDir }

// sortKey orders entries as git does: a folder sorts as if its name ended in "/".
func (e Entry) sortKey() string {
	if e.IsDir() {
		return e.Name + "/"
	}
	return e.Name
}

// encodeTree writes entries in git's tree format, sorted as git sorts them.
func encodeTree(entries []Entry) []byte {
	sort.Slice(entries, func(i, j int) bool { return entries[i].sortKey() < entries[j].sortKey() })
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(e.Mode)
		b.WriteByte(' ')
		b.WriteString(e.Name)
		b.WriteByte(0)
		b.Write(e.ID[:])
	}
	return b.Bytes()
}

var errBadTree = errors.New("not a tree in git's format")

// decodeTree reads a tree's entries; a name that could lead out of its folder is refused.
func decodeTree(data []byte) ([]Entry, error) {
	var out []Entry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp <= 0 || nul <= sp+1 || len(data) < nul+1+sha1.Size {
			return nil, errBadTree
		}
		e := Entry{Mode: string(data[:sp]), Name: string(data[sp+1 : nul])}
		copy(e.ID[:], data[nul+1:nul+1+sha1.Size])
		switch e.Mode {
		case ModeFile, ModeExec, ModeSymlink, ModeDir:
		default:
			return nil, fmt.Errorf("%w: mode %q", errBadTree, e.Mode)
		}
		if !safeName(e.Name) {
			return nil, fmt.Errorf("%w: name %q", errBadTree, e.Name)
		}
		out = append(out, e)
		data = data[nul+1+sha1.Size:]
	}
	return out, nil
}

// safeName: one path component, never "." or "..", no slash, no NUL.
func safeName(n string) bool {
	return n != "" && n != "." && n != ".." && !bytes.ContainsAny([]byte(n), "/\x00")
}
