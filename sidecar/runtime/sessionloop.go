package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/safefile"
)

// LoopOptions configure a session loop (cli-agent-session-loop.md): an agent runs as a
// series of fresh-context sessions, up to MaxIterations, that share state only through
// files in its working folder: a feature list (tests with a passes flag) and progress notes.
type LoopOptions struct {
	// MaxIterations bounds the number of sessions (required, at least 1).
	MaxIterations int
	// Delay is the pause between sessions (default 3s, as the reference loop).
	Delay time.Duration
	// InitializerPrompt starts the first session when the feature list does not exist yet;
	// CodingPrompt starts every other session. Defaults: DefaultInitializerPrompt and
	// DefaultCodingPrompt. Both are prefixed with "Session N of M." and the file names.
	InitializerPrompt string
	CodingPrompt      string
	// FeatureList and ProgressFile are paths relative to the agent's working folder
	// (defaults feature_list.json and claude-progress.txt).
	FeatureList  string
	ProgressFile string
	// MaxConsecutiveFailures ends the loop after this many failed sessions in a row
	// (default 3); a failed session is otherwise retried with a fresh one.
	MaxConsecutiveFailures int
	// OnSession is called with each session's process as soon as it starts (to forward its
	// events); the loop itself only waits for it.
	OnSession func(session int, p *Process)
}

// Feature is one entry of the feature list.
type Feature struct {
	Category    string   `json:"category"`
	Description string   `json:"description"`
	Steps       []string `json:"steps"`
	Passes      bool     `json:"passes"`
}

// LoopResult is how a session loop ended.
type LoopResult struct {
	Sessions []Result `json:"sessions"`
	// Features and Passing count the feature list after the last session (-1: unreadable).
	Features int `json:"features"`
	Passing  int `json:"passing"`
	// Reason: "all features pass", "max iterations", "too many failed sessions", "stopped".
	Reason string `json:"reason"`
	// Violations lists breaches of the feature-list rules (only passes may change, and only
	// from false to true; no entry removed, added or edited), one per session that broke them.
	Violations []string `json:"violations,omitempty"`
	// FeatureListError says why the feature list could not be read, if it could not.
	FeatureListError string `json:"featureListError,omitempty"`
}

// DefaultInitializerPrompt and DefaultCodingPrompt are the two agents of the two-agent
// pattern, in short.
const (
	DefaultInitializerPrompt = `You are the initializer of a long coding task. Read the task, then create the feature list: a JSON array of {"category","description","steps":[…],"passes":false}, one entry per testable feature. Set up the project skeleton, commit it if the folder is a git repository, and write your progress notes for the next session.`
	DefaultCodingPrompt      = `You are one coding session of a long task, with a fresh context. Get your bearings: read the progress notes, the feature list and the recent history. Check that features marked passing still pass. Then pick the next feature with "passes": false, implement and test it, and set its "passes" to true. Only the passes field may change: never remove, add or edit features. Commit if the folder is a git repository, and update the progress notes for the next session.`
)

// RunSessionLoop runs spec as a session loop. Each session is a new Start (never a resumed
// CLI session: the context is fresh by design); it returns once the loop ends.
func RunSessionLoop(ctx context.Context, spec Spec, task string, o LoopOptions) (LoopResult, error) {
	if o.MaxIterations < 1 {
		return LoopResult{}, fmt.Errorf("runtime: agent %s: session loop needs max_iterations of at least 1", spec.AgentID)
	}
	if o.Delay <= 0 {
		o.Delay = 3 * time.Second
	}
	if o.FeatureList == "" {
		o.FeatureList = "feature_list.json"
	}
	if o.ProgressFile == "" {
		o.ProgressFile = "claude-progress.txt"
	}
	if o.InitializerPrompt == "" {
		o.InitializerPrompt = DefaultInitializerPrompt
	}
	if o.CodingPrompt == "" {
		o.CodingPrompt = DefaultCodingPrompt
	}
	if o.MaxConsecutiveFailures <= 0 {
		o.MaxConsecutiveFailures = 3
	}
	dir, err := spec.workDir()
	if err != nil {
		return LoopResult{}, err
	}
	root, err := safefile.Open(dir)
	if err != nil {
		return LoopResult{}, err
	}
	defer root.Close()
	spec.ResumeSession = ""

	var res LoopResult
	before, exists, ferr := readFeatures(root, o.FeatureList)
	failures := 0
	for n := 1; n <= o.MaxIterations; n++ {
		if n > 1 {
			t := time.NewTimer(o.Delay)
			select {
			case <-ctx.Done():
				t.Stop()
				res.Reason = "stopped"
				return res, nil
			case <-t.C:
			}
		}
		prompt := o.CodingPrompt
		if !exists {
			prompt = o.InitializerPrompt
		}
		prompt = fmt.Sprintf("Session %d of %d. Feature list: %s. Progress notes: %s.\n\n%s\n\nThe task:\n%s",
			n, o.MaxIterations, o.FeatureList, o.ProgressFile, prompt, task)
		p, err := Start(ctx, spec, prompt)
		if err != nil {
			return res, err
		}
		if o.OnSession != nil {
			o.OnSession(n, p)
		}
		r := p.Wait()
		res.Sessions = append(res.Sessions, r)

		after, nowExists, err := readFeatures(root, o.FeatureList)
		ferr = err
		if exists && nowExists && err == nil {
			if v := featureViolation(before, after); v != "" {
				res.Violations = append(res.Violations, fmt.Sprintf("session %d: %s", n, v))
			}
		}
		if err == nil {
			before, exists = after, nowExists
		}
		switch r.Status {
		case StatusStopped:
			res.Reason = "stopped"
			return finishLoop(res, before, exists, ferr), nil
		case StatusFailed:
			failures++
			if failures >= o.MaxConsecutiveFailures {
				res.Reason = "too many failed sessions"
				return finishLoop(res, before, exists, ferr), nil
			}
		default:
			failures = 0
		}
		if exists && ferr == nil && len(before) > 0 && countPassing(before) == len(before) {
			res.Reason = "all features pass"
			return finishLoop(res, before, exists, ferr), nil
		}
	}
	res.Reason = "max iterations"
	return finishLoop(res, before, exists, ferr), nil
}

func finishLoop(res LoopResult, fl []Feature, exists bool, err error) LoopResult {
	switch {
	case err != nil:
		res.Features, res.Passing, res.FeatureListError = -1, -1, err.Error()
	case exists:
		res.Features, res.Passing = len(fl), countPassing(fl)
	}
	return res
}

func countPassing(fl []Feature) int {
	n := 0
	for _, f := range fl {
		if f.Passes {
			n++
		}
	}
	return n
}

// maxFeatureList caps the feature list the sidecar reads (the agent writes it).
const maxFeatureList = 16 << 20

// readFeatures reads the feature list in the working folder (the agent's: see safefile).
func readFeatures(root *safefile.Dir, name string) ([]Feature, bool, error) {
	b, err := root.ReadFile(name, maxFeatureList)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	var fl []Feature
	if err := json.Unmarshal(b, &fl); err != nil {
		return nil, true, fmt.Errorf("%s: not a JSON array of features: %w", name, err)
	}
	return fl, true, nil
}

// featureViolation checks the feature-list rules between two sessions.
func featureViolation(before, after []Feature) string {
	if len(after) != len(before) {
		return fmt.Sprintf("the feature list went from %d to %d entries", len(before), len(after))
	}
	for i := range before {
		b, a := before[i], after[i]
		if b.Passes && !a.Passes {
			return fmt.Sprintf("feature %d (%q) went from passing to failing", i+1, b.Description)
		}
		b.Passes, a.Passes = false, false
		if !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("feature %d (%q) was edited: only passes may change", i+1, before[i].Description)
		}
	}
	return ""
}
