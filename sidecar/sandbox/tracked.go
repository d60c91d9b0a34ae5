package sandbox

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
)

// trackedFiles are the files git tracks in the workspace (workspace-relative), read from the
// repository's index once, when a walk first meets a build folder: most walks never do, and
// a workspace that is not a repository tracks nothing.
type trackedFiles struct {
	workspace string
	once      sync.Once
	files     map[string]bool
	dirs      map[string]bool // every folder above a tracked file
}

func (t *trackedFiles) load() {
	t.once.Do(func() {
		t.files, t.dirs = map[string]bool{}, map[string]bool{}
		abs, err := filepath.Abs(t.workspace)
		if err != nil {
			return
		}
		repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
		if err != nil {
			return
		}
		wt, err := repo.Worktree()
		if err != nil {
			return
		}
		idx, err := repo.Storer.Index()
		if err != nil {
			return
		}
		// The workspace may be a folder inside the repository: index paths are the
		// repository's.
		top, err := filepath.EvalSymlinks(wt.Filesystem.Root())
		if err != nil {
			return
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return
		}
		prefix, err := filepath.Rel(top, real)
		if err != nil || strings.HasPrefix(prefix, "..") {
			return
		}
		prefix = filepath.ToSlash(prefix) + "/"
		if prefix == "./" {
			prefix = ""
		}
		for _, e := range idx.Entries {
			p, ok := strings.CutPrefix(e.Name, prefix)
			if !ok {
				continue
			}
			t.files[p] = true
			for d := p; ; {
				i := strings.LastIndexByte(d, '/')
				if i < 0 {
					break
				}
				d = d[:i]
				if t.dirs[d] {
					break
				}
				t.dirs[d] = true
			}
		}
	})
}

// has: git tracks the file p.
func (t *trackedFiles) has(p string) bool {
	if t == nil {
		return false
	}
	t.load()
	return t.files[p]
}

// holds: git tracks some file inside the folder dir.
func (t *trackedFiles) holds(dir string) bool {
	if t == nil {
		return false
	}
	t.load()
	return t.dirs[dir]
}
