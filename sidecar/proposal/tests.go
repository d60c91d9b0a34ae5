package proposal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// Tests in the review. The run records the last result of each kind of check it ran in a
// worker's sandbox — its test command (params.test_command) and its verifier
// (params.verify_command) — in proposal/tests.json, with the output in proposal/test.log.
// The review shows them; a proposal whose tests failed says so on its first line.
const TestsFile = "proposal/tests.json"

// Kinds of TestResult.
const (
	TestKindTest   = "test"
	TestKindVerify = "verify"
)

// Bounds on what a result keeps of the output, and what a prompt quotes.
const (
	maxFailingLines = 20
	maxFailingLine  = 300
	maxTestOutput   = 4 << 20
)

// TestResult is one run of a check.
type TestResult struct {
	Kind     string   `json:"kind"` // TestKindTest or TestKindVerify
	Command  []string `json:"command"`
	ExitCode int      `json:"exitCode"` // -1: it did not start, or was killed
	Passed   bool     `json:"passed"`
	At       string   `json:"at"`
	// Failing are the lines of the output that say what failed (bounded), or its last lines
	// when none does.
	Failing []string `json:"failing,omitempty"`
	// Error is why it could not run, when it could not.
	Error string `json:"error,omitempty"`
	// Patch is the digest of changes.patch when it ran (Review says whether it still is).
	Patch string `json:"patch,omitempty"`
	// Current (in a review): the proposal's patch is the one it ran against.
	Current bool `json:"current"`
}

// Tests are a proposal's last results, one per kind.
type Tests struct {
	Results []TestResult `json:"results"`
	// Log is proposal/test.log (the last test command's output), when there is one.
	Log string `json:"log,omitempty"`
}

// Failed says whether the last result of some kind failed.
func (t *Tests) Failed() bool {
	if t == nil {
		return false
	}
	for _, r := range t.Results {
		if !r.Passed {
			return true
		}
	}
	return false
}

// FirstFailure is the first failed result, or nil.
func (t *Tests) FirstFailure() *TestResult {
	if t == nil {
		return nil
	}
	for i := range t.Results {
		if !t.Results[i].Passed {
			return &t.Results[i]
		}
	}
	return nil
}

// failingLine are lines that say a test failed in the common runners' words: TAP's "not ok",
// go test's "--- FAIL" and "FAIL", pytest's "FAILED" and "E   ", jest and mocha's "✕" and "●",
// assertion errors, panics and compiler errors.
var failingLine = regexp.MustCompile(`(?i)^\s*(not ok\b|--- fail|fail\b|failed\b|e\s{2,}|✕|✗|×|●|\d+\) |error\b|error:|panic:|assertion|traceback|exception\b|.*:\d+:\d*:? error\b)`)

// reportedFailure matches a line that only a failing run prints, in a test runner's own
// words: TAP's "not ok" (less a # TODO or # SKIP directive), go test's "--- FAIL:" and its
// closing "FAIL", pytest's "FAILED file::test" and a summary that counts failures (pytest's
// "=== 1 failed", jest's "Tests: 1 failed", mocha's "2 failing").
var (
	reportedFailure = regexp.MustCompile(`^(not ok\b|--- FAIL:|FAIL\s*$|FAIL\t|FAILED \S+::|=+ .*\b[1-9][0-9]* failed\b|Tests:\s+[1-9][0-9]* failed\b|\s*[1-9][0-9]* failing\s*$)`)
	tapDirective    = regexp.MustCompile(`(?i)#\s*(todo|skip)\b`)
)

// ReportedFailures are the lines of output that report a failed test (bounded), whatever
// the command's exit status.
func ReportedFailures(output []byte) []string {
	var hits []string
	sc := bufio.NewScanner(bytes.NewReader(output))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && len(hits) < maxFailingLines {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if reportedFailure.MatchString(line) && !(strings.HasPrefix(line, "not ok") && tapDirective.MatchString(line)) {
			hits = append(hits, cutLine(line))
		}
	}
	return hits
}

// Judge is r as the review tells it: a check that exited 0 has still failed when its output
// reports a failed test (a test script that swallows the runner's status, a harness that
// ends well whatever happened), and a failure carries the lines that say what failed.
func Judge(r TestResult, output []byte) TestResult {
	if r.Passed {
		if f := ReportedFailures(output); len(f) > 0 {
			r.Passed, r.Failing = false, f
		}
	}
	if !r.Passed && len(r.Failing) == 0 {
		r.Failing = FailingLines(output)
	}
	return r
}

// FailingLines are the lines of output that say what failed, bounded; when none matches, the
// output's last lines.
func FailingLines(output []byte) []string {
	var all, hits []string
	sc := bufio.NewScanner(bytes.NewReader(output))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" {
			continue
		}
		all = append(all, line)
		if len(all) > 4*maxFailingLines {
			all = all[1:]
		}
		if len(hits) < maxFailingLines && failingLine.MatchString(line) {
			hits = append(hits, cutLine(line))
		}
	}
	if len(hits) > 0 {
		return hits
	}
	if len(all) > maxFailingLines {
		all = all[len(all)-maxFailingLines:]
	}
	for i := range all {
		all[i] = cutLine(all[i])
	}
	return all
}

func cutLine(s string) string {
	if r := []rune(s); len(r) > maxFailingLine {
		return string(r[:maxFailingLine-1]) + "…"
	}
	return s
}

// RecordTest keeps r as the sandbox's last result of its kind (and the output of a test
// command as proposal/test.log). r.At, r.Patch and, for a failure, r.Failing are filled in;
// r is judged on its output too (Judge).
func RecordTest(workspace, runID, agentID string, r TestResult, output []byte) error {
	paths, err := sandbox.PathsFor(workspace, runID, agentID)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(paths.AgentDir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll("proposal", 0o755); err != nil {
		return err
	}
	r.At = time.Now().UTC().Format(timeLayout)
	if patch, err := readRootCapped(root, PatchFile, MaxPatchBytes); err == nil {
		r.Patch = PatchDigest(patch)
	}
	r = Judge(r, output)
	if len(output) > maxTestOutput {
		output = append(output[:maxTestOutput:maxTestOutput], "\n… (cut)\n"...)
	}
	if r.Kind == TestKindTest {
		if err := writeFileAtomic(root, TestLogFile, output, 0o644); err != nil {
			return err
		}
	}
	t := readTests(root)
	kept := t.Results[:0]
	for _, x := range t.Results {
		if x.Kind != r.Kind {
			kept = append(kept, x)
		}
	}
	t.Results = append(kept, r)
	b, _ := json.MarshalIndent(struct {
		Results []TestResult `json:"results"`
	}{t.Results}, "", "  ")
	return writeFileAtomic(root, TestsFile, append(b, '\n'), 0o644)
}

func readTests(root *os.Root) *Tests {
	t := &Tests{Results: []TestResult{}}
	if b, err := readRootCapped(root, TestsFile, maxJSONBytes); err == nil {
		_ = json.Unmarshal(b, t)
	}
	if t.Results == nil {
		t.Results = []TestResult{}
	}
	return t
}

// ReadTests are a proposal's last results and its test log, each result marked Current when
// the proposal's patch is the one it ran against; nil when there are none.
func ReadTests(agentDir string, patch []byte) *Tests {
	root, err := os.OpenRoot(agentDir)
	if err != nil {
		return nil
	}
	defer root.Close()
	t := readTests(root)
	if b, err := readRootCapped(root, TestLogFile, maxTestOutput+64); err == nil {
		t.Log = string(b)
	}
	if len(t.Results) == 0 && t.Log == "" {
		return nil
	}
	now := PatchDigest(patch)
	for i := range t.Results {
		t.Results[i].Current = t.Results[i].Patch == now
	}
	return t
}

// What is the kind of check in words: "tests" or "verifier".
func (r *TestResult) What() string {
	if r.Kind == TestKindVerify {
		return "verifier"
	}
	return "tests"
}

// Outcome is how the check ended, in words: "`npm test` exited 1", "`npm test` could not
// run: …".
func (r *TestResult) Outcome() string {
	s := "`" + strings.Join(r.Command, " ") + "`"
	if r.Error != "" {
		return s + " could not run: " + r.Error
	}
	return s + " exited " + strconv.Itoa(r.ExitCode)
}

// FailurePrompt is a failed result as a worker's next prompt quotes it: the command, its exit
// status and the failing lines, bounded.
func FailurePrompt(r *TestResult) string {
	var b strings.Builder
	b.WriteString("Your " + r.What() + " failed after your last changes: " + r.Outcome() + ".\n")
	for _, l := range r.Failing {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}
