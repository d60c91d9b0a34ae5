package server

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/internal/reviewfixture"
	"github.com/agentcanvas/agentcanvas/sidecar/proposal"
)

// The review loop from the editor, on the real binary: a comment on a hunk is kept with the
// proposal and comes back with getProposal, a hunk's reviewed mark is kept, requestChanges
// sends the comment to the worker (a real process) as a revision run, and when it ends the
// proposal is at revision 2 with the worker's answer, an interdiff, and the mark on the hunk
// the revision left as it was.
func TestReviewLoopFromTheEditor(t *testing.T) {
	root := reviewfixture.Workspace(t, map[string]string{
		"greet.txt": "hi\n" + strings.Repeat("-\n", 8) + "bye\n",
		"agents/coder.sh": `prompt=$(cat)
if grep -q "A reviewer read revision" <<<"$prompt"; then
  grep -q 'greet.txt line 1: more warmly' <<<"$prompt" && sed -i 's/^hello$/hello, friend/' greet.txt
  echo 'ANSWER c1: warmer now'
  exit 0
fi
sed -i 's/^hi$/hello/; s/^bye$/see you/' greet.txt
echo changed
`,
		"flows/fix.yaml": reviewfixture.Flow("greet.txt"),
	})
	uri := pathURI(filepath.Join(root, "flows", "fix.yaml"))
	c := startBinary(t)
	c.initialize(root)
	var info struct{ RunID string }
	c.mustCall("agentcanvas/startRun", map[string]any{"uri": uri}, &info)
	c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"run_finished"`) && strings.Contains(string(p), info.RunID)
	})
	ref := map[string]any{"runId": info.RunID, "agentId": "coder"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range ref {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}

	if _, err := c.call("agentcanvas/addReviewComment", with(map[string]any{"path": "agents/coder.sh", "line": 1, "text": "x"})); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "does not change that file") {
		t.Errorf("a comment on a file the proposal does not change: %v", err)
	}
	c.mustCall("agentcanvas/addReviewComment", with(map[string]any{"path": "greet.txt", "line": 1, "text": "more warmly"}), nil)
	var rv struct {
		Files []struct {
			Hunks []struct {
				Key      string
				Reviewed bool
				Lines    []struct{ Kind, Text string }
			}
		}
		Review struct {
			Revision int
			Comments []struct{ ID, Text, Answer string }
		}
	}
	c.mustCall("agentcanvas/getProposal", ref, &rv)
	if len(rv.Files) != 1 || len(rv.Files[0].Hunks) != 2 || rv.Review.Revision != 1 || len(rv.Review.Comments) != 1 || rv.Review.Comments[0].ID != "c1" {
		t.Fatalf("getProposal: %+v", rv)
	}
	bye := rv.Files[0].Hunks[1].Key // "-bye +see you": revision 2 leaves it as it is
	c.mustCall("agentcanvas/markHunksReviewed", with(map[string]any{"keys": []string{bye}, "reviewed": true}), nil)

	var rev struct{ RunID string }
	c.mustCall("agentcanvas/requestChanges", ref, &rev)
	if rev.RunID == "" || rev.RunID == info.RunID {
		t.Fatalf("requestChanges: %+v", rev)
	}
	done := c.waitNote("agentcanvas/runEvent", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"event":"proposal_revised"`)
	})
	if !strings.Contains(string(done), `"revision":2`) || !strings.Contains(string(done), `"changed":true`) {
		t.Errorf("proposal_revised: %s", done)
	}
	c.mustCall("agentcanvas/getProposal", ref, &rv)
	if rv.Review.Revision != 2 || rv.Review.Comments[0].Answer != "warmer now" || len(rv.Files[0].Hunks) != 2 || rv.Files[0].Hunks[0].Reviewed || !rv.Files[0].Hunks[1].Reviewed {
		t.Errorf("after the revision: %+v", rv)
	}
	var id struct {
		Patch string
		Files []string
	}
	c.mustCall("agentcanvas/getInterdiff", ref, &id)
	if !strings.Contains(id.Patch, "-hello\n+hello, friend\n") || len(id.Files) != 1 {
		t.Errorf("getInterdiff: %+v", id)
	}
	var sides proposal.PatchSides
	c.mustCall("agentcanvas/getProposalSides", ref, &sides)
	if len(sides.Sides) != 1 || !strings.Contains(sides.Sides[0].New, "hello, friend\n") || !strings.HasPrefix(sides.Patch, "sha256:") {
		t.Errorf("getProposalSides: %+v", sides)
	}
	if _, err := c.call("agentcanvas/requestChanges", ref); err == nil || !strings.Contains(err.Message, "no open comment") {
		t.Errorf("requestChanges with nothing open: %v", err)
	}
	c.shutdownExit()
}
