package sandbox

// The patterns git reads before any .gitignore, lowest precedence first: the person's global
// excludes file (core.excludesFile in /etc/gitconfig or ~/.gitconfig, else
// $XDG_CONFIG_HOME/git/ignore or ~/.config/git/ignore), then the repository's info/exclude
// (in the common git folder of a linked worktree). Files they exclude, such as a local secrets
// file someone keeps out of git through info/exclude, are not copied into a sandbox, as a git
// worktree would not hold them either.

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxExcludesBytes bounds an excludes file read whole.
const maxExcludesBytes = 1 << 20

// excludePatterns are the global and the repository's excludes of workspace (none when it is
// not a git repository's top folder, or a file cannot be read: excludes only ever leave files
// out).
func excludePatterns(workspace string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	if global := globalExcludes(); global != nil {
		ps = append(ps, global...)
	}
	if dir := commonGitDir(workspace); dir != "" {
		local, _ := parsePatterns(readSmall(filepath.Join(dir, "info", "exclude")), nil)
		ps = append(ps, local...)
	}
	return ps
}

// globalExcludes reads core.excludesFile as git does (system, then the person's config), or
// git's default global file when neither sets it.
func globalExcludes() []gitignore.Pattern {
	root := osfs.New("/")
	if ps, err := gitignore.LoadGlobalPatterns(root); err == nil && len(ps) > 0 {
		return ps
	}
	if ps, err := gitignore.LoadSystemPatterns(root); err == nil && len(ps) > 0 {
		return ps
	}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		cfg = filepath.Join(home, ".config")
	}
	ps, _ := parsePatterns(readSmall(filepath.Join(cfg, "git", "ignore")), nil)
	return ps
}

// commonGitDir is workspace/.git, or for a linked worktree (.git a file "gitdir: X") the
// common folder X's commondir names; "" when there is none.
func commonGitDir(workspace string) string {
	dotgit := filepath.Join(workspace, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dotgit
	case !fi.Mode().IsRegular():
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(readSmall(dotgit))), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(workspace, gitdir)
	}
	common := strings.TrimSpace(string(readSmall(filepath.Join(gitdir, "commondir"))))
	switch {
	case common == "":
		return gitdir
	case filepath.IsAbs(common):
		return common
	}
	return filepath.Join(gitdir, common)
}

// readSmall reads a regular file of at most maxExcludesBytes; nil otherwise.
func readSmall(name string) []byte {
	fi, err := os.Stat(name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxExcludesBytes {
		return nil
	}
	b, _ := os.ReadFile(name)
	return b
}

// parsePatterns reads gitignore lines (blank lines and comments skipped) for the folder domain.
func parsePatterns(b []byte, domain []string) ([]gitignore.Pattern, error) {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), maxExcludesBytes)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps, sc.Err()
}
