package proposal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseComment(t *testing.T) {
	for arg, want := range map[string]Comment{
		"src/a.go:12=rename x":          {Path: "src/a.go", Line: 12, Kind: CommentNote, Text: "rename x"},
		"src/a.go=add a test":           {Path: "src/a.go", Kind: CommentNote, Text: "add a test"},
		"a:b.txt:3= reject: not needed": {Path: "a:b.txt", Line: 3, Kind: CommentReject, Text: "not needed"},
		"x.go:7=a = b, not a := b":      {Path: "x.go", Line: 7, Kind: CommentNote, Text: "a = b, not a := b"},
	} {
		got, err := ParseComment(arg)
		if err != nil || got != want {
			t.Errorf("ParseComment(%q) = %+v, %v; want %+v", arg, got, err, want)
		}
	}
	for arg, want := range map[string]string{"src/a.go:12": "PATH:LINE=TEXT", "a.go:3=  ": "PATH:LINE=TEXT", "a.go:0=x": "lines count from 1"} {
		if _, err := ParseComment(arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseComment(%q): %v, want %q", arg, err, want)
		}
	}
}

// reviewed makes a proposal changing two files, for the comment tests.
func reviewed(t *testing.T) (ws, ref string) {
	t.Helper()
	ws, paths := prepared(t, map[string]string{"a.txt": "F:one\ntwo\nthree\n", "b.txt": "F:bee\n", "c.txt": "F:sea\n"})
	writeTree(t, paths.WorkDir, map[string]string{"new.txt": "F:fresh\n"})
	if err := os.WriteFile(filepath.Join(paths.WorkDir, "a.txt"), []byte("one\n2\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(paths.WorkDir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	cr, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"})
	if err != nil {
		t.Fatal(err)
	}
	return ws, filepath.Join(cr.AgentDir, JSONFile)
}

// Comments are checked against the proposal (a file it changes, a known kind, some text)
// and a refused one writes nothing; kept comments are numbered and survive a reread.
func TestAddComments(t *testing.T) {
	ws, ref := reviewed(t)
	for _, tc := range []struct {
		c    Comment
		want string
	}{
		{Comment{Path: "c.txt", Text: "x"}, "does not change that file"},
		{Comment{Path: "../a.txt", Text: "x"}, "comment on \"../a.txt\""},
		{Comment{Path: "a.txt", Text: "  "}, "the text is empty"},
		{Comment{Path: "a.txt", Text: "x", Kind: "approve"}, `kind "approve"`},
		{Comment{Path: "a.txt", Text: strings.Repeat("x", maxCommentBytes+1)}, "at most"},
	} {
		if _, _, err := AddComments(ws, ref, []Comment{{Path: "a.txt", Line: 2, Text: "fine"}, tc.c}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
	l, _ := Load(ws, ref)
	if _, err := os.Stat(filepath.Join(l.AgentDir, ReviewStateFile)); !os.IsNotExist(err) {
		t.Fatalf("a refused batch wrote review.json: %v", err)
	}
	_, added, err := AddComments(ws, ref, []Comment{{Path: "a.txt", Line: 2, Text: "why 2?"}, {Path: "new.txt", Kind: CommentReject, Text: "not wanted"}})
	if err != nil || len(added) != 2 || added[0].ID != "c1" || added[1].ID != "c2" || added[0].Revision != 1 {
		t.Fatalf("added %+v, %v", added, err)
	}
	s, err := DeleteComment(ws, ref, "c1")
	if err != nil || len(s.Comments) != 1 || s.Comments[0].ID != "c2" {
		t.Fatalf("delete: %+v %v", s, err)
	}
	_, added, _ = AddComments(ws, ref, []Comment{{Path: "a.txt", Text: "again"}})
	if added[0].ID != "c3" {
		t.Errorf("a new comment after c2 is %s", added[0].ID)
	}
	again, err := ReadReviewState(l.AgentDir, l.Proposal)
	if err != nil || len(again.Open()) != 2 || again.Revision != 1 || again.Revisions[0].RunID != "run1" {
		t.Errorf("reread %+v %v", again, err)
	}

	if _, err := Apply(context.Background(), ws, ref, Selection{}, ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := AddComments(ws, ref, []Comment{{Path: "a.txt", Text: "late"}}); err == nil || !strings.Contains(err.Error(), "is applied") {
		t.Errorf("a comment on an applied proposal: %v", err)
	}
}

// A hunk's reviewed mark is keyed by its file and lines, so the same hunk in another
// position (another hunk added above it in a revision) keeps its mark.
func TestHunkKeyIgnoresPosition(t *testing.T) {
	h := ReviewHunk{Index: 1, OldStart: 3, NewStart: 3, Lines: []ReviewLine{{Kind: " ", Text: "a"}, {Kind: "-", Text: "b"}, {Kind: "+", Text: "c"}}}
	moved := h
	moved.Index, moved.OldStart, moved.NewStart = 2, 9, 11
	if HunkKey("f", h) != HunkKey("f", moved) {
		t.Error("a moved hunk has a new key")
	}
	other := h
	other.Lines = []ReviewLine{{Kind: " ", Text: "a"}, {Kind: "-", Text: "b"}, {Kind: "+", Text: "d"}}
	if HunkKey("f", h) == HunkKey("f", other) || HunkKey("f", h) == HunkKey("g", h) {
		t.Error("a changed hunk, or the same lines in another file, share a key")
	}
	ws, ref := reviewed(t)
	k := HunkKey("a.txt", h)
	if s, err := MarkReviewed(ws, ref, []string{k, k}, true); err != nil || !s.IsReviewed(k) || len(s.Reviewed) != 1 {
		t.Fatalf("mark: %+v %v", s, err)
	}
	if s, err := MarkReviewed(ws, ref, []string{k}, false); err != nil || s.IsReviewed(k) {
		t.Fatalf("unmark: %+v %v", s, err)
	}
}

// The interdiff compares the files as each revision leaves them: a file revision 2 changes
// again, one it takes back (back to input/), one it deletes after adding, one it adds.
func TestInterdiff(t *testing.T) {
	ws, ref := reviewed(t)
	if _, _, err := AddComments(ws, ref, []Comment{{Path: "a.txt", Line: 2, Text: "two, in words"}}); err != nil {
		t.Fatal(err)
	}
	start, err := BeginRevision(ws, ref, "run2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BeginRevision(ws, ref, "run3"); err == nil || !strings.Contains(err.Error(), "already being made (run run2") {
		t.Fatalf("a second revision while one is being made: %v", err)
	}
	work := filepath.Join(start.Loaded.AgentDir, "work")
	writeTree(t, work, map[string]string{"b.txt": "F:bee\n", "d.txt": "F:dee\n"})
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("one\ntwo (2)\nthree\n"), 0o644)
	os.Remove(filepath.Join(work, "new.txt"))
	if _, err := Create(context.Background(), CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"}); err != nil {
		t.Fatal(err)
	}
	res, err := FinishRevision(ws, ref, "run2", start.Comments, map[string]string{"c1": "spelled out"}, true)
	if err != nil || !res.Changed || res.Revision != 2 || len(res.Answered) != 1 {
		t.Fatalf("finish: %+v %v", res, err)
	}
	id, err := GetInterdiff(ws, ref, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(id.Files, ",") != "a.txt,b.txt,d.txt,new.txt" || id.From != 1 || id.To != 2 {
		t.Errorf("files %v (%d→%d)", id.Files, id.From, id.To)
	}
	for _, want := range []string{"-2\n+two (2)\n", "new file mode 100644\nindex 0000000000000000000000000000000000000000..", "+bee\n", "+dee\n", "deleted file mode 100644", "-fresh\n"} {
		if !strings.Contains(id.Patch, want) {
			t.Errorf("interdiff lacks %q:\n%s", want, id.Patch)
		}
	}
	// The current revision is its patch, not work/ as the worker may have left it since.
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("one\nharmless\nthree\n"), 0o644)
	if again, err := GetInterdiff(ws, ref, 0, 0); err != nil || again.Patch != id.Patch {
		t.Errorf("with work/ changed after the patch was made, the interdiff is\n%s\nnot the patch's\n%s (%v)", again.Patch, id.Patch, err)
	}
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("one\ntwo (2)\nthree\n"), 0o644)
	if _, err := GetInterdiff(ws, ref, 2, 3); err == nil || !strings.Contains(err.Error(), "revisions 1 to 2") {
		t.Errorf("an interdiff past the last revision: %v", err)
	}

	// A revision run that changes nothing leaves the revision as it was and drops its copy.
	AddComments(ws, ref, []Comment{{Path: "a.txt", Text: "sure?"}})
	start, err = BeginRevision(ws, ref, "run4")
	if err != nil {
		t.Fatal(err)
	}
	res, err = FinishRevision(ws, ref, "run4", start.Comments, map[string]string{"c2": "yes"}, true)
	if err != nil || res.Changed || res.Revision != 2 || len(res.Answered) != 1 {
		t.Fatalf("an unchanged revision: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(start.Loaded.AgentDir, RevisionsDir, "2")); !os.IsNotExist(err) {
		t.Errorf("the copy of revision 2 was kept: %v", err)
	}
}
