package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loopAgent is a command agent playing the two-agent pattern with three features: the first
// session (no feature list) writes it, each later one marks the next feature passing. It
// records the first line of each prompt in prompts.log.
const loopAgent = `head -n 1 >> prompts.log
n=$(cat claude-progress.txt 2>/dev/null | wc -l)
if [ ! -f feature_list.json ]; then pass=0; else pass=$n; fi
[ -n "$BREAK_RULES" ] && [ "$n" = 2 ] && { echo '[{"category":"functional","description":"one","steps":[],"passes":true}]' > feature_list.json; echo "session" >> claude-progress.txt; exit 0; }
{
  echo '['
  for i in 1 2 3; do
    p=false; [ "$i" -le "$pass" ] && p=true
    sep=,; [ "$i" = 3 ] && sep=
    echo "  {\"category\":\"functional\",\"description\":\"feature $i\",\"steps\":[\"step 1\"],\"passes\":$p}$sep"
  done
  echo ']'
} > feature_list.json
echo "session" >> claude-progress.txt`

func TestSessionLoopUntilAllPass(t *testing.T) {
	s := shellSpec(t, loopAgent)
	var started []int
	res, err := RunSessionLoop(t.Context(), s, "build the app", LoopOptions{
		MaxIterations: 10, Delay: time.Millisecond,
		OnSession: func(n int, p *Process) { started = append(started, n) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// The initializer, then three coding sessions, one feature each.
	if res.Reason != "all features pass" || len(res.Sessions) != 4 || res.Features != 3 || res.Passing != 3 || len(res.Violations) != 0 {
		t.Fatalf("%+v", res)
	}
	if len(started) != 4 {
		t.Errorf("OnSession calls %v", started)
	}
	prompts, _ := os.ReadFile(filepath.Join(s.Workspace, "prompts.log"))
	lines := strings.Split(strings.TrimSpace(string(prompts)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "Session 1 of 10.") || !strings.HasPrefix(lines[3], "Session 4 of 10.") {
		t.Fatalf("prompts %q", lines)
	}
}

func TestSessionLoopMaxIterationsAndRules(t *testing.T) {
	s := shellSpec(t, loopAgent)
	res, err := RunSessionLoop(t.Context(), s, "x", LoopOptions{MaxIterations: 2, Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != "max iterations" || len(res.Sessions) != 2 || res.Passing != 1 {
		t.Fatalf("%+v", res)
	}

	s = shellSpec(t, loopAgent)
	s.Env = map[string]string{"BREAK_RULES": "1"}
	res, err = RunSessionLoop(t.Context(), s, "x", LoopOptions{MaxIterations: 3, Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 1 || !strings.Contains(res.Violations[0], "session 3: the feature list went from 3 to 1 entries") {
		t.Fatalf("violations %q", res.Violations)
	}

	s = shellSpec(t, "exit 3")
	res, _ = RunSessionLoop(t.Context(), s, "x", LoopOptions{MaxIterations: 9, Delay: time.Millisecond, MaxConsecutiveFailures: 2})
	if res.Reason != "too many failed sessions" || len(res.Sessions) != 2 {
		t.Fatalf("%+v", res)
	}
	if _, err := RunSessionLoop(t.Context(), s, "x", LoopOptions{}); err == nil {
		t.Errorf("max iterations 0 accepted")
	}
}

func TestFeatureViolation(t *testing.T) {
	f := func(d string, p bool) Feature {
		return Feature{Category: "functional", Description: d, Steps: []string{"s"}, Passes: p}
	}
	for _, tc := range []struct {
		before, after []Feature
		want          string
	}{
		{[]Feature{f("a", false)}, []Feature{f("a", true)}, ""},
		{[]Feature{f("a", true)}, []Feature{f("a", false)}, "went from passing to failing"},
		{[]Feature{f("a", false)}, []Feature{f("b", false)}, "was edited"},
		{[]Feature{f("a", false)}, []Feature{f("a", false), f("b", false)}, "from 1 to 2 entries"},
	} {
		got := featureViolation(tc.before, tc.after)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%v -> %v: %q, want %q", tc.before, tc.after, got, tc.want)
		}
	}
}

// The feature list is the agent's file: a session that leaves a FIFO, a sparse terabyte or a
// link out of its folder in its place ends the loop with the list unreadable, not a sidecar
// that waits for a writer, runs out of memory or reads what the link leads to.
func TestSessionLoopFeatureListIsTheAgents(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(outside, []byte(`[{"category":"x","description":"SECRET","steps":[],"passes":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, make := range map[string]string{
		"fifo":   "mkfifo feature_list.json",
		"sparse": "truncate -s 1T feature_list.json",
		"link":   "ln -s " + outside + " feature_list.json",
	} {
		t.Run(name, func(t *testing.T) {
			res, err := RunSessionLoop(t.Context(), shellSpec(t, "cat >/dev/null; "+make), "build the app", LoopOptions{MaxIterations: 2, Delay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if res.FeatureListError == "" || res.Features != -1 || strings.Contains(res.FeatureListError, "SECRET") {
				t.Errorf("loop result %+v, want the list unreadable", res)
			}
		})
	}
}
