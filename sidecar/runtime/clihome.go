package runtime

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/agentcanvas/agentcanvas/sidecar/confine"
	"github.com/agentcanvas/agentcanvas/sidecar/safefile"
	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// A confined CLI agent gets a private CLI home for its run: its CLI's settings, sessions,
// logs and (only when it has no other way to authenticate) login live there, never in the
// user's own ~/.claude, ~/.claude.json, ~/.codex or ~/.gemini. Those configure the user's own
// later runs of the CLI: a hook, MCP server, notify program or instruction file an agent
// wrote there would run outside every sandbox, later. What the agent writes in its private
// home affects only its own later turns in this run (resume and the session loop need its
// sessions there).

// cliHomeVars are, per backend, the variable that moves its CLI's whole home (Claude Code's
// ~/.claude and ~/.claude.json, Codex's ~/.codex; GEMINI_CLI_HOME stands for HOME, so the
// Gemini CLI's folder is $GEMINI_CLI_HOME/.gemini).
var cliHomeVars = map[string]string{BackendClaude: "CLAUDE_CONFIG_DIR", BackendCodex: "CODEX_HOME", BackendGemini: "GEMINI_CLI_HOME"}

// homesDir is the folder of a run's private CLI homes, in the run's state.
const homesDir = "homes"

// cliHomeDir is where an agent's private home for backend is: in the run's state
// (.agentcanvas/runs/RUN/homes/AGENT/BACKEND), kept for the run's later turns, a resumed run
// and a revision run (Spec.HomeRunID names the run whose home it is); in its private
// temporary folder when the agent belongs to no run.
func cliHomeDir(s *Spec, backend, tmp string) string {
	run := s.RunID
	if s.HomeRunID != "" {
		run = s.HomeRunID
	}
	if s.Workspace != "" && sandbox.ValidateRunID(s.RunID) == nil && sandbox.ValidateRunID(run) == nil {
		if a, err := sandbox.SanitiseAgentID(s.AgentID); err == nil {
			return filepath.Join(s.Workspace, filepath.FromSlash(confine.RunsDir), run, homesDir, a, backend)
		}
	}
	return filepath.Join(tmp, "cli-home-"+backend)
}

// prepareCLIHome makes the private home of a CLI agent and seeds what it lacks from the
// user's own configuration (userEnv: the agent's environment before the home replaces it).
// A login copied into it belongs to runID (the agent's run, "" for none): removed when that
// run ends, whichever run's home it is. It returns the variables that point the CLI at it;
// nil for a backend with no CLI home. The home is the agent's to write: everything in it is
// read and written through safefile, which follows none of the agent's links out of it.
func prepareCLIHome(backend, dir, runID string, userEnv []string) (map[string]string, error) {
	v, ok := cliHomeVars[backend]
	if !ok {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	home, err := safefile.Open(dir)
	if err != nil {
		return nil, err
	}
	defer home.Close()
	switch backend {
	case BackendClaude:
		err = seedClaudeHome(home, runID, userEnv)
	case BackendCodex:
		err = seedCodexHome(home, runID, userEnv)
	case BackendGemini:
		err = seedGeminiHome(home, runID, userEnv)
	}
	return map[string]string{v: dir}, err
}

// Caps on what the sidecar reads: the user's own CLI settings (Claude Code's .claude.json
// keeps every project's history and grows to megabytes), and a file of a private home, which
// the agent may have made of any size.
const (
	maxUserConfig = 64 << 20
	maxHomeFile   = 16 << 20
)

// readUserFile reads one of the user's own CLI files (capped, regular files only); "" reads
// nothing.
func readUserFile(path string) ([]byte, error) {
	if path == "" {
		return nil, fs.ErrNotExist
	}
	return safefile.ReadFile(path, maxUserConfig)
}

// userCLIHome is where the user's own CLI keeps its home: the variable when the agent's
// environment sets it (runtime.env), else $HOME/rel.
func userCLIHome(env []string, name, rel string) string {
	if v := confine.Lookup(env, name); filepath.IsAbs(v) {
		return v
	}
	if h := confine.Lookup(env, "HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, rel)
	}
	return ""
}

// hasAny reports whether env sets any of names to a non-empty value.
func hasAny(env []string, names ...string) bool {
	for _, n := range names {
		if confine.Lookup(env, n) != "" {
			return true
		}
	}
	return false
}

// seedJSON writes rel in the home (0600), when nothing is there yet, with the keys of src's
// JSON object that keep lists (a key maps to nil: the whole value; to a list: those keys of
// its object). A missing or unreadable src seeds an empty object. Whatever is at rel already
// (a file, a link, a FIFO) is the agent's: kept, never read or written through.
func seedJSON(home *safefile.Dir, rel, src string, keep map[string][]string) error {
	if _, err := home.Lstat(rel); err == nil {
		return nil
	}
	out := map[string]any{}
	if b, err := readUserFile(src); err == nil {
		var in map[string]any
		if json.Unmarshal(b, &in) == nil {
			for k, sub := range keep {
				val, ok := in[k]
				if !ok {
					continue
				}
				if sub == nil {
					out[k] = val
					continue
				}
				if obj, ok := val.(map[string]any); ok {
					picked := map[string]any{}
					for _, s := range sub {
						if x, ok := obj[s]; ok {
							picked[s] = x
						}
					}
					out[k] = picked
				}
			}
		}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return writeNew(home, rel, append(b, '\n'))
}

// copyLogin copies the user's stored login file src into the home as rel (0600), when it
// exists and the home has none yet; it is removed again when the run ends (RemoveTemp), also
// when an earlier sidecar of a resumed run copied it.
func copyLogin(runID string, home *safefile.Dir, rel, src string) error {
	copied, err := copyOnce(home, rel, src)
	if err != nil || !copied {
		if _, serr := home.Lstat(rel); serr != nil {
			return err
		}
	}
	login := homeFile{home.Path(), rel}
	copiedLogins.Lock()
	if copiedLogins.m == nil {
		copiedLogins.m = map[string][]homeFile{}
	}
	if !slices.Contains(copiedLogins.m[runID], login) {
		copiedLogins.m[runID] = append(copiedLogins.m[runID], login)
	}
	copiedLogins.Unlock()
	return err
}

// copyOnce copies src to rel in the home (0600) when nothing is at rel and src exists;
// copied says it did.
func copyOnce(home *safefile.Dir, rel, src string) (copied bool, err error) {
	if _, err := home.Lstat(rel); err == nil {
		return false, nil
	}
	b, err := readUserFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // nothing to copy: the CLI goes without
	}
	if err != nil {
		return false, err
	}
	return true, writeNew(home, rel, b)
}

// homeFile is a file of a private home: the home, and the name inside it.
type homeFile struct{ home, rel string }

// copiedLogins are the login files copied into private homes, by run: a login is a secret,
// so it is on disk in the run's state only while the run goes on.
var copiedLogins struct {
	sync.Mutex
	m map[string][]homeFile
}

// removeLogins deletes the logins copied for a run's agents, each by its name inside its
// home: a folder of the name the agent made a link (.gemini -> ~/.gemini) leads nowhere.
func removeLogins(runID string) {
	copiedLogins.Lock()
	files := copiedLogins.m[runID]
	delete(copiedLogins.m, runID)
	copiedLogins.Unlock()
	for _, f := range files {
		if home, err := safefile.Open(f.home); err == nil {
			_ = home.Remove(f.rel)
			home.Close()
		}
	}
}

// writeNew creates rel in the home with b, 0600, when nothing is there; something the agent
// made there meanwhile is kept.
func writeNew(home *safefile.Dir, rel string, b []byte) error {
	err := home.WriteNew(rel, b, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	return err
}
