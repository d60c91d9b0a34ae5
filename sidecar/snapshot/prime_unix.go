//go:build unix

package snapshot

import (
	"os"
	"path"
	"time"

	"golang.org/x/sys/unix"
)

// Prime teaches t that dir is a copy of what tree was taken of, made just now (a sandbox's
// work/ beside the input/ it was copied with): each file of dir whose size is its blob's is
// taken to hold that blob without being read, so the next Take hashes only what changes after.
// A file whose size differs, or that is missing, gets no stamp and is hashed then.
func (t *Tracker) Prime(s *Store, dir string, tree ID) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	stamps := map[string]stamped{}
	if err := prime(s, fd, "", tree, stamps); err != nil {
		return err
	}
	now := time.Now()
	for p, st := range stamps {
		st.trusted = st.st.settledBy(now)
		stamps[p] = st
	}
	t.stamps = stamps
	return nil
}

func prime(s *Store, fd int, rel string, tree ID, stamps map[string]stamped) error {
	defer unix.Close(fd)
	es, err := s.ReadTree(tree)
	if err != nil {
		return err
	}
	for _, e := range es {
		p := path.Join(rel, e.Name)
		switch {
		case e.IsDir():
			cfd, err := unix.Openat(fd, e.Name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // not there: the next Take sees it
			}
			if err := prime(s, cfd, p, e.ID, stamps); err != nil {
				return err
			}
		case e.Mode != ModeSymlink:
			var st unix.Stat_t
			size, err := s.Size(e.ID)
			if err != nil {
				return err
			}
			if unix.Fstatat(fd, e.Name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != size {
				continue
			}
			stamps[p] = stamped{st: stampOf(&st), id: e.ID}
		}
	}
	return nil
}
