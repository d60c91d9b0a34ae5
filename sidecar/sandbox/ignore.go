package sandbox

import (
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
	return parsePatterns(b, domain)
}

// ancestorIgnores loads the excludes (excludes.go), then the .gitignore files of the root and
// of every folder above dir.
func ancestorIgnores(root *os.Root, excludes []gitignore.Pattern, dir string) ([]gitignore.Pattern, error) {
	ps, err := readIgnore(root, "")
	if err != nil {
		return nil, err
	}
	ps = append(excludes[:len(excludes):len(excludes)], ps...)
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

// walkDir visits a folder, skipping ignored and blocked names (and, when the whole workspace
// is asked for, whatever lies outside the allowed folders), refusing special files. A symlink
// met on the way is copied as the link it is, never followed, even when it leads out of the
// workspace: trees have such links, and a proposal that adds or changes one is refused.
//
// A build folder (node_modules, dist: safepath.BuildFolders) is skipped too, except for the
// files git tracks in it: those are source (Go's src/cmd/dist), and are copied.
func walkDir(root *os.Root, dir string, ps []gitignore.Pattern, rules safepath.Rules, whole bool, tracked *trackedFiles, visit func(entry)) error {
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
		p := path.Join(dir, d.Name())
		if isOwnTemp(p) {
			continue // a temporary file of an apply
		}
		isDir := d.IsDir()
		if _, blocked := rules.Blocks(p); blocked {
			if isDir && rules.OnlyBuildFolder(p) && tracked.holds(p) {
				if err := walkTracked(root, p, rules, whole, tracked, visit); err != nil {
					return err
				}
			}
			continue
		}
		if whole && !allowedOrAbove(rules, p, isDir) {
			continue
		}
		if _, err := safepath.Clean(p, rules); err != nil && !(whole && isDir && errors.Is(err, safepath.ErrNotAllowed)) {
			return refuse(p, "%s", err.(*safepath.Error).Reason)
		}
		if m.Match(strings.Split(p, "/"), isDir) {
			continue
		}
		if isDir {
			if err := walkDir(root, p, ps, rules, whole, tracked, visit); err != nil {
				return err
			}
			continue
		}
		if err := visitFile(root, p, d, visit); err != nil {
			return err
		}
	}
	return nil
}

// visitFile visits the file (or link) p a walk met.
func visitFile(root *os.Root, p string, d fs.DirEntry, visit func(entry)) error {
	fi, err := d.Info()
	if err != nil {
		return refuse(p, "%v", err)
	}
	e, err := entryFor(root, p, fi, true)
	if err != nil {
		return err
	}
	visit(e)
	return nil
}

// allowedOrAbove reports whether p is inside an allowed folder (every path is when none is
// set) or, for a folder, on the way to one.
func allowedOrAbove(rules safepath.Rules, p string, isDir bool) bool {
	if len(rules.Allowed) == 0 {
		return true
	}
	for _, a := range rules.Allowed {
		if p == a || strings.HasPrefix(p, a+"/") || isDir && strings.HasPrefix(a, p+"/") {
			return true
		}
	}
	return false
}

// walkTracked visits the files git tracks in the build folder dir, whatever .gitignore says
// (git tracks them all the same): only them, and only the folders that hold some.
func walkTracked(root *os.Root, dir string, rules safepath.Rules, whole bool, tracked *trackedFiles, visit func(entry)) error {
	ents, err := fs.ReadDir(root.FS(), dir)
	if err != nil {
		return refuse(dir, "%v", err)
	}
	for _, d := range ents {
		p := path.Join(dir, d.Name())
		if _, blocked := rules.Blocks(p); blocked && !rules.OnlyBuildFolder(p) || whole && !allowedOrAbove(rules, p, d.IsDir()) {
			continue
		}
		if d.IsDir() {
			if tracked.holds(p) {
				if err := walkTracked(root, p, rules, whole, tracked, visit); err != nil {
					return err
				}
			}
			continue
		}
		if !tracked.has(p) {
			continue
		}
		if _, err := safepath.Clean(p, safepath.Lexical); err != nil {
			return refuse(p, "%s", err.(*safepath.Error).Reason)
		}
		if err := visitFile(root, p, d, visit); err != nil {
			return err
		}
	}
	return nil
}
