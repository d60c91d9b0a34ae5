package confinetest

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// What a test run again as nobody reads: its package's folder (testdata), the repository's
// go.mod (how the tests find the repository) and package.json (the CLIs' pinned versions), and
// the agent CLIs under node_modules. In a clone nobody can reach — under a folder only its
// owner may enter, or with files only their owner may read — those are copied, hard-linked
// where the file system allows, into a folder nobody can read.

// cliScopes are the node_modules entries that hold the agent CLIs and what they load.
var cliScopes = []string{".bin", "@anthropic-ai", "@openai", "@google", "@lydell", "node-pty", "@github"}

// nobodyWorkdir is the folder the run as nobody starts in: the package's own when nobody can
// read it and the CLIs, else the same folder in a copy made under dir.
func nobodyWorkdir(dir string) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root := cwd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(root) == root {
			return cwd, nil // not in the repository: nothing to copy
		}
		root = filepath.Dir(root)
	}
	modules := filepath.Join(root, "node_modules")
	if othersCanRead(cwd) && othersCanRead(filepath.Join(root, "go.mod")) && othersCanRead(filepath.Join(modules, ".bin")) {
		return cwd, nil
	}
	rel, err := filepath.Rel(root, cwd)
	if err != nil {
		return "", err
	}
	mirror := filepath.Join(dir, "repo")
	if err := copyTree(cwd, filepath.Join(mirror, rel)); err != nil {
		return "", err
	}
	for _, f := range []string{"go.mod", "package.json"} {
		if err := copyTree(filepath.Join(root, f), filepath.Join(mirror, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	for _, s := range cliScopes {
		if err := copyTree(filepath.Join(modules, s), filepath.Join(mirror, "node_modules", s)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	// Every folder on the way is the copy's: readable and searchable by everyone.
	for d := filepath.Join(mirror, rel); ; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			return "", err
		}
		if d == mirror {
			break
		}
	}
	return filepath.Join(mirror, rel), nil
}

// othersCanRead: a user who is neither the owner nor in the group can reach path (every
// folder above it searchable by others) and read it.
func othersCanRead(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().Perm()&0o004 != 0 && othersCanSearch(filepath.Dir(path))
}

// copyTree copies src (a file, a link or a folder) to dst: files are hard-linked when they
// are readable by everyone and the file system allows it, else copied readable by everyone
// (executable ones executable by everyone); folders are made 0755, links made again.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return err
			}
			return os.Symlink(target, to)
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if info.Mode().Perm()&0o004 != 0 && os.Link(p, to) == nil {
			return nil
		}
		mode := info.Mode().Perm() | 0o444
		if mode&0o111 != 0 {
			mode |= 0o111
		}
		return copyMode(p, to, mode)
	})
}

func copyMode(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode) // the umask took bits off
}

// sharedTemp is a temporary folder nobody can reach: the system's, or /tmp when TMPDIR is
// one only its owner may enter.
func sharedTemp() string {
	if t := os.TempDir(); othersCanSearch(t) {
		return t
	}
	return "/tmp"
}

// othersCanSearch: a user who is neither the owner nor in the group can search dir and
// every folder above it.
func othersCanSearch(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return false
		}
		if filepath.Dir(d) == d {
			return true
		}
	}
}
