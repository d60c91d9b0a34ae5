// Package sandbox prepares the per-agent sandboxes of spec §6.1–6.3:
// .agentcanvas/sandboxes/<runId>/<agentIdSanitised>/{input,work,proposal}. input/ is the
// read-only baseline a proposal is diffed against, work/ is the worker's copy.
//
// Every path is checked before anything is created: the lexical rules of safepath, no
// symlink on the way to a file (on disk), no named symlink that leads out of the workspace
// (one met inside a folder is copied as a link, never followed), no special files. "." is
// the whole workspace, like a git worktree. The sandbox is built in a staging folder and
// renamed into place, so a refusal or a failure part-way leaves nothing behind.
package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// WholeWorkspace, as the only name or one of several in Files, asks for the whole workspace:
// every file git would not ignore (tracked or not), with the same folder rules as any folder.
const WholeWorkspace = "."

// Dir is the workspace-relative folder holding every run's sandboxes.
const Dir = ".agentcanvas/sandboxes"

// MetaFile is the file in an agent folder that records how the sandbox was prepared; proposal
// creation reads base.gitHead from it (spec §6.4: gitHead is taken at prepare time).
const MetaFile = "sandbox.json"

// Options for Prepare.
type Options struct {
	Workspace string // absolute or relative path of the workspace root
	RunID     string
	AgentID   string
	Files     []string // workspace-relative files or folders (folders honour .gitignore); "." is the whole workspace
	// Rules are the person's allowed and blocked folders: a file outside the allowed folders
	// or in a blocked one is refused before anything is created; blocked folders met inside
	// a copied folder are skipped.
	Rules safepath.Rules
	// Progress, if set, is called after each copied entry (from several goroutines, serialised).
	Progress func(done, total int)
	// Workers is the number of parallel copiers; 0 means a default from the CPU count.
	Workers int
	// AllowEmpty prepares a sandbox with no files (a worker that only creates files).
	AllowEmpty bool
	// Shared are workspace-relative dependency folders linked into work/ rather than copied
	// (see shared.go); each must exist.
	Shared []string
	// Notice, if set, is told what the recovery before the copy did (recover.go), in one line.
	Notice func(string)
	// Waiting, if set, is told (once, with the holder) when another writer of the workspace
	// holds its lock and Prepare waits for it.
	Waiting func(holder string)
}

// Paths are the absolute folders of one agent's sandbox (JSON keys as DESIGN.md prints them).
type Paths struct {
	AgentDir    string `json:"agentDir"`
	InputDir    string `json:"inputDir"`
	WorkDir     string `json:"workDir"`
	ProposalDir string `json:"proposalDir"`
}

// Meta is sandbox.json.
type Meta struct {
	Version   string   `json:"version"`
	RunID     string   `json:"runId"`
	AgentID   string   `json:"agentId"`
	AgentDir  string   `json:"agentDir"` // the sanitised folder name
	CreatedAt string   `json:"createdAt"`
	Base      Base     `json:"base"`
	Requested []string `json:"requested"` // Files as given (canonical form)
	Files     []string `json:"files"`     // every file or symlink copied, sorted
	// Shared are the dependency folders linked into work/ (never part of a proposal).
	Shared []string `json:"shared,omitempty"`
}

// Base records the workspace revision a sandbox was copied from.
type Base struct {
	GitHead string `json:"gitHead"`
}

// RefusedError says why a sandbox was not prepared. Nothing was created.
type RefusedError struct {
	Path   string // the offending path, if any
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Path == "" {
		return "sandbox refused: " + e.Reason
	}
	return fmt.Sprintf("sandbox refused: %s: %s", e.Path, e.Reason)
}

func refuse(p, format string, a ...any) error {
	return &RefusedError{Path: p, Reason: fmt.Sprintf(format, a...)}
}

// validRunID is ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ without a regexp: compiling that one at
// init cost ~0.3 ms (the {0,127} unrolls) on every start of the binary.
func validRunID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// ValidateRunID accepts 1–128 characters of [A-Za-z0-9._-], starting with a letter or digit,
// and not containing "..".
func ValidateRunID(id string) error {
	if !validRunID(id) || strings.Contains(id, "..") {
		return refuse("", "run id %q: use 1-128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit", id)
	}
	return nil
}

// SanitiseAgentID maps an agent id to a folder name: every character outside [A-Za-z0-9._-]
// becomes '_', leading dots become '_', at most 100 characters. "custom:coder-1" becomes
// "custom_coder-1". Ids that are empty or name a blocked folder are refused.
func SanitiseAgentID(id string) (string, error) {
	if id == "" {
		return "", refuse("", "empty agent id")
	}
	var b strings.Builder
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	for i := 0; i < len(s) && s[i] == '.'; i++ {
		s = s[:i] + "_" + s[i+1:]
	}
	if len(s) > 100 {
		s = s[:100]
	}
	if _, blocked := (safepath.Rules{}).Blocks(s); blocked {
		return "", refuse("", "agent id %q names an internal folder", id)
	}
	return s, nil
}

// RelDir returns the workspace-relative agent folder, checking both ids.
func RelDir(runID, agentID string) (string, error) {
	if err := ValidateRunID(runID); err != nil {
		return "", err
	}
	a, err := SanitiseAgentID(agentID)
	if err != nil {
		return "", err
	}
	return path.Join(Dir, runID, a), nil
}

// PathsFor returns the folders of a sandbox without touching disk (spec §6.3 getSandboxPaths).
func PathsFor(workspace, runID, agentID string) (Paths, error) {
	rel, err := RelDir(runID, agentID)
	if err != nil {
		return Paths{}, err
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return Paths{}, err
	}
	d := filepath.Join(abs, filepath.FromSlash(rel))
	return Paths{AgentDir: d, InputDir: filepath.Join(d, "input"), WorkDir: filepath.Join(d, "work"), ProposalDir: filepath.Join(d, "proposal")}, nil
}

// entry is one thing to copy.
type entry struct {
	path    string // workspace-relative
	symlink string // target, if a symlink
	exec    bool
	size    int64
}

// Prepare checks every requested path, then creates and fills the sandbox. On any refusal or
// failure nothing is left on disk (*RefusedError for refusals).
func Prepare(ctx context.Context, o Options) (Paths, error) {
	rel, err := RelDir(o.RunID, o.AgentID)
	if err != nil {
		return Paths{}, err
	}
	paths, err := PathsFor(o.Workspace, o.RunID, o.AgentID)
	if err != nil {
		return Paths{}, err
	}
	if len(o.Files) == 0 && !o.AllowEmpty {
		return Paths{}, refuse("", "no files to copy")
	}
	root, err := os.OpenRoot(o.Workspace)
	if err != nil {
		return Paths{}, err
	}
	defer root.Close()
	// Refusals first, before anything is made (the lock's file included).
	tracked := &trackedFiles{workspace: o.Workspace}
	if entries, _, err := collect(root, excludePatterns(o.Workspace), o.Files, o.Rules, tracked); err != nil {
		return Paths{}, err
	} else if len(entries) == 0 && !o.AllowEmpty {
		return Paths{}, refuse(".", "the workspace holds no file the folder rules let through")
	}
	if err := notThere(root, rel); err != nil {
		return Paths{}, err
	}
	if err := ctx.Err(); err != nil {
		return Paths{}, err
	}
	// One writer of the workspace at a time, and an interrupted apply recovered first: the
	// copy is never of a half-applied workspace, and two runs never create the same folders at
	// once.
	lk, err := wslock.Acquire(ctx, o.Workspace, fmt.Sprintf("preparing the sandbox of %s (run %s)", o.AgentID, o.RunID), wslock.Options{Waiting: o.Waiting})
	if err != nil {
		return Paths{}, err
	}
	defer lk.Release()
	if err := recoverFirst(o, root); err != nil {
		return Paths{}, err
	}
	if err := notThere(root, rel); err != nil { // again, with the lock: another run may have made it
		return Paths{}, err
	}
	// Listed again under the lock and after the recovery: an apply that was under way had
	// temporary files beside its targets, gone by now, and may have added files.
	entries, requested, err := collect(root, excludePatterns(o.Workspace), o.Files, o.Rules, tracked)
	if err != nil {
		return Paths{}, err
	}
	if len(entries) == 0 && !o.AllowEmpty {
		return Paths{}, refuse(".", "the workspace holds no file the folder rules let through")
	}
	if err := stageAndPlace(ctx, root, rel, entries, requested, o); err != nil {
		return Paths{}, err
	}
	return paths, nil
}

// notThere refuses a sandbox that exists already.
func notThere(root *os.Root, rel string) error {
	if _, err := root.Lstat(rel); err == nil {
		return refuse(rel, "the sandbox already exists")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// stageAndPlace builds the sandbox in a staging folder and renames it into place; after a
// failure the staging folder and the folders made for it are removed.
func stageAndPlace(ctx context.Context, root *os.Root, rel string, entries []entry, requested []string, o Options) error {
	created, err := mkdirsRecording(root, path.Dir(rel))
	if err != nil {
		return err
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	staging := path.Join(path.Dir(rel), "."+path.Base(rel)+stagingInfix+hex.EncodeToString(rnd[:]))
	ok := false
	defer func() {
		if ok {
			return
		}
		removeTree(root, staging)
		for i := len(created) - 1; i >= 0; i-- {
			root.Remove(created[i]) // only succeeds while empty
		}
	}()
	if err := root.Mkdir(staging, 0o755); err != nil {
		return err
	}
	st, err := root.OpenRoot(staging)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := fill(ctx, root, st, entries, o); err != nil {
		return err
	}
	meta := Meta{Version: "1", RunID: o.RunID, AgentID: o.AgentID, AgentDir: path.Base(rel),
		CreatedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), Base: Base{GitHead: GitHead(o.Workspace)},
		Requested: requested}
	for _, e := range entries {
		meta.Files = append(meta.Files, e.path)
	}
	wsAbs, err := filepath.Abs(o.Workspace)
	if err != nil {
		return err
	}
	if meta.Shared, err = linkShared(root, st, wsAbs, o.Shared, entries); err != nil {
		return err
	}
	mb, _ := json.MarshalIndent(meta, "", "  ")
	if err := st.WriteFile(MetaFile, append(mb, '\n'), 0o644); err != nil {
		return err
	}
	if err := root.Rename(staging, rel); err != nil {
		return err
	}
	ok = true
	return nil
}

// GitHead returns the commit the workspace's HEAD points at, or "" when the workspace is not a
// git repository or HEAD is unborn. In a linked worktree the branch HEAD names is in the main
// repository's common folder.
func GitHead(workspace string) string {
	repo, err := git.PlainOpenWithOptions(workspace, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return ""
	}
	ref, err := repo.Head()
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}

// ReadMeta reads sandbox.json of a prepared sandbox.
func ReadMeta(workspace, runID, agentID string) (*Meta, error) {
	rel, err := RelDir(runID, agentID)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	b, err := root.ReadFile(path.Join(rel, MetaFile))
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path.Join(rel, MetaFile), err)
	}
	return &m, nil
}

// Remove deletes one agent's sandbox (making input/ writable first).
func Remove(workspace, runID, agentID string) error {
	rel, err := RelDir(runID, agentID)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return err
	}
	defer root.Close()
	return removeTree(root, rel)
}

// removeTree makes every folder under name writable, then removes it.
func removeTree(root *os.Root, name string) error {
	// WalkDir calls us for a folder before reading it, so each folder is writable in time.
	fs.WalkDir(root.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			root.Chmod(p, 0o755)
		}
		return nil
	})
	return root.RemoveAll(name)
}

func mkdirsRecording(root *os.Root, dir string) ([]string, error) {
	var created []string
	cur := ""
	for _, c := range strings.Split(dir, "/") {
		cur = path.Join(cur, c)
		fi, err := root.Lstat(cur)
		if err == nil {
			if !fi.IsDir() {
				return created, fmt.Errorf("%s exists and is not a folder", cur)
			}
			continue
		}
		if err := root.Mkdir(cur, 0o755); errors.Is(err, fs.ErrExist) {
			continue // made meanwhile by a writer that does not take the lock
		} else if err != nil {
			return created, err
		}
		created = append(created, cur)
	}
	return created, nil
}

// requestedEntry checks one requested name: the path rules, no symlink on the way, that it
// exists, and (for a file) what it is. A folder's entry has no path.
func requestedEntry(root *os.Root, f string, rules safepath.Rules) (entry, error) {
	p, err := safepath.Clean(f, rules)
	if err != nil {
		return entry{}, refuse(f, "%s", err.(*safepath.Error).Reason)
	}
	if isOwnTemp(p) {
		return entry{}, refuse(p, "is a temporary file of an apply in progress, not one of yours")
	}
	if err := checkPrefix(root, p); err != nil {
		return entry{}, err
	}
	fi, err := root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return entry{}, refuse(p, "does not exist in the workspace")
	} else if err != nil {
		return entry{}, refuse(p, "%v", err)
	}
	if fi.IsDir() {
		return entry{}, nil
	}
	return entryFor(root, p, fi, false)
}

// collect checks every requested path and expands folders, leaving out what the excludes and
// the .gitignore files ignore. It touches nothing.
func collect(root *os.Root, excludes []gitignore.Pattern, files []string, rules safepath.Rules, tracked *trackedFiles) ([]entry, []string, error) {
	seen := map[string]bool{}
	var out []entry
	add := func(e entry) {
		if !seen[e.path] {
			seen[e.path] = true
			out = append(out, e)
		}
	}
	var requested []string
	for _, f := range files {
		if f == WholeWorkspace {
			requested = append(requested, f)
			if err := walkDir(root, ".", excludes, rules, true, tracked, add); err != nil {
				return nil, nil, err
			}
			continue
		}
		e, err := requestedEntry(root, f, rules)
		if err != nil {
			return nil, nil, err
		}
		p, _ := safepath.Clean(f, rules)
		requested = append(requested, p)
		if e.path == "" { // a folder
			ps, err := ancestorIgnores(root, excludes, p)
			if err != nil {
				return nil, nil, err
			}
			if err := walkDir(root, p, ps, rules, false, tracked, add); err != nil {
				return nil, nil, err
			}
			continue
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	// A path may not be both a file and a folder prefix of another (a/ is a symlink and a/b a file).
	for i := 1; i < len(out); i++ {
		if strings.HasPrefix(out[i].path, out[i-1].path+"/") {
			return nil, nil, refuse(out[i].path, "passes through %s, which is not a folder", out[i-1].path)
		}
	}
	// The whole workspace may hold nothing the folder rules let through: a worker that only
	// creates files then starts empty (Prepare refuses that unless AllowEmpty).
	if len(out) == 0 && len(files) > 0 && !slices.Contains(requested, WholeWorkspace) {
		return nil, nil, refuse("", "the requested paths hold no files")
	}
	return out, requested, nil
}

// checkPrefix refuses a path when one of its parent folders is a symlink: leading out of the
// workspace it is an escape, and inside it a proposal could not be applied safely either.
func checkPrefix(root *os.Root, p string) error {
	comps := strings.Split(p, "/")
	cur := ""
	for _, c := range comps[:len(comps)-1] {
		cur = path.Join(cur, c)
		fi, err := root.Lstat(cur)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return refuse(p, "does not exist in the workspace")
			}
			return refuse(p, "%v", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := root.Readlink(cur)
			if escapes(cur, target) {
				return refuse(p, "passes through the symlink %s -> %s, which leads out of the workspace", cur, target)
			}
			return refuse(p, "passes through the symlink %s -> %s; name the real path instead", cur, target)
		}
		if !fi.IsDir() {
			return refuse(p, "%s is not a folder", cur)
		}
	}
	return nil
}

// escapes reports whether a symlink at link with the given target points outside the
// workspace (absolute, or climbing above the root).
func escapes(link, target string) bool {
	if target == "" || strings.HasPrefix(target, "/") || filepath.IsAbs(target) || strings.Contains(target, "\\") {
		return true
	}
	j := path.Join(path.Dir(link), target)
	return j == ".." || strings.HasPrefix(j, "../")
}

// entryFor is the entry of one file or symlink. A symlink leading out of the workspace is
// refused when it was named, kept as a link when it was met walking a folder (walked).
func entryFor(root *os.Root, p string, fi fs.FileInfo, walked bool) (entry, error) {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(p)
		if err != nil {
			return entry{}, refuse(p, "%v", err)
		}
		if escapes(p, target) && !walked {
			return entry{}, refuse(p, "is a symlink to %s, which leads out of the workspace", target)
		}
		return entry{path: p, symlink: target}, nil
	case fi.Mode().IsRegular():
		return entry{path: p, exec: fi.Mode()&0o111 != 0, size: fi.Size()}, nil
	default:
		return entry{}, refuse(p, "is not a regular file, folder or symlink (%v)", fi.Mode().Type())
	}
}

func runWorkers(ctx context.Context, n int, jobs []func() error) error {
	if n <= 0 {
		n = min(8, max(2, runtime.NumCPU())) // more only adds journal contention
	}
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if first != nil || next >= len(jobs) {
					mu.Unlock()
					return
				}
				if err := ctx.Err(); err != nil {
					first = err
					mu.Unlock()
					return
				}
				j := jobs[next]
				next++
				mu.Unlock()
				if err := j(); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// fill copies entries into input/ and work/ of the staging root, then makes input/ read-only.
func fill(ctx context.Context, ws, st *os.Root, entries []entry, o Options) error {
	dirs := map[string]bool{}
	for _, e := range entries {
		for d := path.Dir(e.path); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	for _, side := range []string{"input", "work", "proposal"} {
		if err := st.Mkdir(side, 0o755); err != nil {
			return err
		}
		if side == "proposal" {
			continue
		}
		for _, d := range sorted {
			if err := st.Mkdir(side+"/"+d, 0o755); err != nil {
				return err
			}
		}
	}
	// One job per folder (or per chunk of a big folder): each opens the source folder and the
	// two destination folders once, so a file costs one open per side rather than one per
	// path component.
	var pmu sync.Mutex
	done := 0
	var jobs []func() error
	c := &copier{}
	const chunk = 128
	for i := 0; i < len(entries); {
		j := i + 1
		dir := path.Dir(entries[i].path)
		for j < len(entries) && j-i < chunk && path.Dir(entries[j].path) == dir {
			j++
		}
		group := entries[i:j]
		jobs = append(jobs, func() error {
			if err := copyGroup(ws, st, dir, group, c); err != nil {
				return err
			}
			if o.Progress != nil {
				pmu.Lock()
				for range group {
					done++
					o.Progress(done, len(entries))
				}
				pmu.Unlock()
			}
			return nil
		})
		i = j
	}
	if err := runWorkers(ctx, o.Workers, jobs); err != nil {
		return err
	}
	// input/ folders read-only, deepest first, then input/ itself.
	for i := len(sorted) - 1; i >= 0; i-- {
		if err := st.Chmod("input/"+sorted[i], 0o555); err != nil {
			return err
		}
	}
	return st.Chmod("input", 0o555)
}

// smallFile is the size up to which a file is read once into memory and written twice;
// bigger files are streamed (io.Copy between files uses copy_file_range on Linux).
const smallFile = 1 << 20
