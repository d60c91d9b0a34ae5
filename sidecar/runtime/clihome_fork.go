package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/safefile"
)

// What a fork of a run (docs/runs.md, Forks) keeps of an agent's private CLI home: only where
// each CLI stores its sessions, the conversation a resumed session continues. Nothing else —
// no setting the home is seeded with again, never a login.

// SessionStores are, per backend, the paths of its CLI home holding its sessions.
var SessionStores = map[string][]string{
	BackendClaude: {"projects"},    // projects/<working folder, encoded>/<session>.jsonl
	BackendCodex:  {"sessions"},    // sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl, found by id
	BackendGemini: {".gemini/tmp"}, // .gemini/tmp/<project>/chats/…, <project> by working folder
}

// CLIHome is where agent's private home for backend is in run's state; false when the ids
// cannot name one.
func CLIHome(workspace, runID, agentID, backend string) (string, bool) {
	s := Spec{Workspace: workspace, RunID: runID, AgentID: agentID}
	dir := cliHomeDir(&s, backend, "")
	return dir, filepath.IsAbs(dir) && strings.HasPrefix(dir, filepath.Join(workspace, filepath.FromSlash(confine.RunsDir)))
}

// RekeySessions moves the sessions a CLI keyed by the working folder from (the original
// run's) to the working folder to (the fork's), in home: Claude Code and the Gemini CLI look a
// session up under the folder they run in. Codex finds a thread by its id alone. The home is
// what the agent left in it: every name is read and renamed inside it (safefile), so a link it
// made there (to the workspace, to another home) is not followed out, nor a FIFO read.
func RekeySessions(backend, home, from, to string) error {
	if from == to || backend != BackendClaude && backend != BackendGemini {
		return nil
	}
	d, err := safefile.Open(home)
	if err != nil {
		return err
	}
	defer d.Close()
	if backend == BackendClaude {
		return rekeyClaude(d, from, to)
	}
	return rekeyGemini(d, from, to)
}

// rekeyClaude renames projects/<from, encoded> to projects/<to, encoded>.
func rekeyClaude(home *safefile.Dir, from, to string) error {
	for _, f := range realAndAsGiven(from) {
		old := filepath.Join("projects", claudeProjectDir(f))
		if _, err := home.Lstat(old); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		return home.Rename(old, filepath.Join("projects", claudeProjectDir(realOf(to))))
	}
	return nil
}

// claudeProjectDir is the folder name Claude Code gives a working folder's sessions: every
// UTF-16 unit that is not an ASCII letter or digit becomes "-"; a name over 200 units keeps its
// first 200 and a hash of the whole path.
func claudeProjectDir(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	var b strings.Builder
	var h int32
	for _, u := range units {
		h = 31*h + int32(u)
		if u < 128 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			b.WriteByte(byte(u))
		} else {
			b.WriteByte('-')
		}
	}
	name := b.String()
	if len(name) <= 200 {
		return name
	}
	return name[:200] + "-" + strconv.FormatInt(abs64(int64(h)), 36)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// rekeyGemini gives the project folder whose .project_root names from the name the Gemini
// CLI migrates from (the SHA-256 of the new working folder): on its next start there it moves
// the sessions into the project folder it makes for to.
func rekeyGemini(home *safefile.Dir, from, to string) error {
	tmp := filepath.Join(".gemini", "tmp")
	entries, err := home.ReadDir(tmp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(realOf(to)))
	target := filepath.Join(tmp, hex.EncodeToString(sum[:]))
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		rootFile := filepath.Join(tmp, e.Name(), ".project_root")
		root, err := home.ReadFile(rootFile, maxProjectRoot)
		if err != nil {
			continue // none, or not a regular file of a path's size
		}
		for _, f := range realAndAsGiven(from) {
			if strings.TrimSpace(string(root)) == f {
				if err := home.Remove(rootFile); err != nil {
					return err
				}
				return home.Rename(filepath.Join(tmp, e.Name()), target)
			}
		}
	}
	return nil
}

// maxProjectRoot bounds a .project_root read: it holds one folder's path.
const maxProjectRoot = 64 << 10

// realAndAsGiven are a folder's path with its links resolved, and as given.
func realAndAsGiven(p string) []string {
	if r := realOf(p); r != p {
		return []string{r, p}
	}
	return []string{p}
}

func realOf(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
