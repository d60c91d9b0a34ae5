package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
)

// readIgnore parses dir/.gitignore (dir "" is the root); a missing file is no patterns.
func readIgnore(root *os.Root, dir string) ([]gitignore.Pattern, error) {
	name := path.Join(dir, ".gitignore")
	fi, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := root.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var domain []string
	if dir != "" && dir != "." {
		domain = strings.Split(dir, "/")
	}
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps, sc.Err()
}

// ancestorIgnores loads the .gitignore files of the root and of every folder above dir.
func ancestorIgnores(root *os.Root, dir string) ([]gitignore.Pattern, error) {
	ps, err := readIgnore(root, "")
	if err != nil {
		return nil, err
	}
	comps := strings.Split(dir, "/")
	for i := 1; i < len(comps); i++ {
		more, err := readIgnore(root, strings.Join(comps[:i], "/"))
		if err != nil {
			return nil, err
		}
		ps = append(ps, more...)
	}
	return ps, nil
}

// walkDir visits a folder, skipping ignored and blocked names, refusing escaping symlinks and
// special files.
func walkDir(root *os.Root, dir string, ps []gitignore.Pattern, rules safepath.Rules, visit func(entry)) error {
	own, err := readIgnore(root, dir)
	if err != nil {
		return err
	}
	if len(own) > 0 {
		ps = append(ps[:len(ps):len(ps)], own...)
	}
	m := gitignore.NewMatcher(ps)
	ents, err := fs.ReadDir(root.FS(), dir)
	if err != nil {
		return refuse(dir, "%v", err)
	}
	for _, d := range ents {
		p := dir + "/" + d.Name()
		if _, blocked := rules.Blocks(p); blocked {
			continue
		}
		if _, err := safepath.Clean(p, rules); err != nil {
			return refuse(p, "%s", err.(*safepath.Error).Reason)
		}
		isDir := d.IsDir()
		if m.Match(strings.Split(p, "/"), isDir) {
			continue
		}
		if isDir {
			if err := walkDir(root, p, ps, rules, visit); err != nil {
				return err
			}
			continue
		}
		fi, err := d.Info()
		if err != nil {
			return refuse(p, "%v", err)
		}
		e, err := entryFor(root, p, fi)
		if err != nil {
			return err
		}
		visit(e)
	}
	return nil
}
