package proposal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentcanvas/agentcanvas/sidecar/safepath"
	"github.com/agentcanvas/agentcanvas/sidecar/wslock"
)

// ReviewStateFile keeps a proposal's review conversation next to it: the person's comments
// on its lines and hunks, the worker's answers, the revisions the comments led to, and the
// hunks marked reviewed. proposal.json stays exactly the format it always was.
const ReviewStateFile = "proposal/review.json"

// Comment kinds.
const (
	CommentNote   = "comment" // a remark or a change asked for
	CommentReject = "reject"  // "reject this hunk, because …": the worker is asked to take it out or redo it
)

// maxCommentBytes bounds one comment's text (it becomes part of a prompt).
const maxCommentBytes = 16 << 10

// Comment is one review comment on a proposal's file. Line is a line of the file as the
// proposal leaves it (1-based); 0 means the file as a whole.
type Comment struct {
	ID        string `json:"id"`
	Path      string `json:"path"`
	Line      int    `json:"line,omitempty"`
	Kind      string `json:"kind"`
	Text      string `json:"text"`
	CreatedAt string `json:"createdAt"`
	// Revision is the revision of the proposal the comment was made on.
	Revision int `json:"revision"`
	// SentIn is the revision whose request carried the comment to the worker (0: not sent yet).
	SentIn int `json:"sentIn,omitempty"`
	// Answer is the worker's reply to the comment, and AnsweredIn the revision it came with.
	Answer     string `json:"answer,omitempty"`
	AnsweredIn int    `json:"answeredIn,omitempty"`
}

// Revision is one version of the proposal. Revision 1 is what the run made; each request for
// changes that yields a change adds one.
type Revision struct {
	Number    int    `json:"number"`
	CreatedAt string `json:"createdAt"`
	// RunID is the run that made this revision (the original run for revision 1, a revision
	// run after that).
	RunID string `json:"runId"`
	// Comments are the ids of the comments this revision was asked to answer.
	Comments []string `json:"comments,omitempty"`
}

// ReviewState is review.json.
type ReviewState struct {
	Revision  int        `json:"revision"`
	Revisions []Revision `json:"revisions"`
	Comments  []Comment  `json:"comments"`
	// Reviewed holds the keys (HunkKey) of the hunks the person marked reviewed; a hunk that
	// a revision leaves as it was keeps its key, and so its mark.
	Reviewed []string `json:"reviewed,omitempty"`
	// Revising is set while a revision run works on the proposal (its run id and process):
	// a second request waits for it to end, and a request whose process died is not in the way.
	Revising *Revising `json:"revising,omitempty"`
	// Notices say what was settled when this state was read (an interrupted revision); not
	// kept in review.json.
	Notices []string `json:"-"`
}

// Revising names the revision run at work.
type Revising struct {
	RunID string `json:"runId"`
	PID   int    `json:"pid"`
	Since string `json:"since"`
	// Comments are the ids of the comments the run was sent (for settling a revision whose
	// process died: revisejournal.go).
	Comments []string `json:"comments,omitempty"`
}

// Open returns the comments not yet answered by a revision.
func (s *ReviewState) Open() []Comment {
	var out []Comment
	for _, c := range s.Comments {
		if c.AnsweredIn == 0 {
			out = append(out, c)
		}
	}
	return out
}

// IsReviewed says whether a hunk's key carries the person's reviewed mark.
func (s *ReviewState) IsReviewed(key string) bool { return slices.Contains(s.Reviewed, key) }

// HunkKey identifies a hunk by its file and its lines, not by its position: the same change
// in revision 2 has the key it had in revision 1 even where other hunks moved it.
func HunkKey(file string, h ReviewHunk) string {
	sum := sha256.New()
	sum.Write([]byte(file + "\x00"))
	for _, l := range h.Lines {
		sum.Write([]byte(l.Kind + l.Text + "\n"))
	}
	return hex.EncodeToString(sum.Sum(nil))[:16]
}

// ParseComment reads the command line's PATH:LINE=TEXT (PATH=TEXT for a file-level comment;
// a TEXT starting "reject:" marks the hunk at that line rejected with the rest as reason).
func ParseComment(arg string) (Comment, error) {
	target, text, ok := strings.Cut(arg, "=")
	if !ok || strings.TrimSpace(text) == "" {
		return Comment{}, fmt.Errorf("comment %q: write it as PATH:LINE=TEXT (or PATH=TEXT for the whole file)", arg)
	}
	c := Comment{Path: target, Kind: CommentNote, Text: strings.TrimSpace(text)}
	if i := strings.LastIndexByte(target, ':'); i >= 0 {
		if n, err := strconv.Atoi(target[i+1:]); err == nil {
			if n < 1 {
				return Comment{}, fmt.Errorf("comment %q: line %d: lines count from 1", arg, n)
			}
			c.Path, c.Line = target[:i], n
		}
	}
	if rest, ok := strings.CutPrefix(c.Text, "reject:"); ok {
		c.Kind, c.Text = CommentReject, strings.TrimSpace(rest)
	}
	return c, nil
}

// checkComment checks a new comment against the proposal it is made on: a path the
// proposal changes, a safe one, a known kind and text of a bounded size.
func checkComment(c Comment, pr *Proposal) error {
	clean, err := safepath.Clean(c.Path, safepath.Rules{})
	if err != nil {
		return fmt.Errorf("comment on %q: %w", c.Path, err)
	}
	if !slices.ContainsFunc(pr.ChangedFiles, func(f ChangedFile) bool { return f.Path == clean }) {
		return fmt.Errorf("comment on %s: the proposal does not change that file (it changes %s)", clean, changedList(pr))
	}
	if c.Kind != CommentNote && c.Kind != CommentReject {
		return fmt.Errorf("comment on %s: kind %q: use %q or %q", clean, c.Kind, CommentNote, CommentReject)
	}
	if strings.TrimSpace(c.Text) == "" {
		return fmt.Errorf("comment on %s: the text is empty", clean)
	}
	if len(c.Text) > maxCommentBytes {
		return fmt.Errorf("comment on %s: %d bytes; at most %d", clean, len(c.Text), maxCommentBytes)
	}
	if c.Line < 0 {
		return fmt.Errorf("comment on %s: line %d: lines count from 1", clean, c.Line)
	}
	return nil
}

func changedList(pr *Proposal) string {
	names := make([]string, 0, len(pr.ChangedFiles))
	for _, f := range pr.ChangedFiles {
		names = append(names, f.Path)
	}
	if len(names) == 0 {
		return "no file"
	}
	return strings.Join(names, ", ")
}

// ReadReviewState reads review.json of a proposal's agent folder; a proposal nobody has
// commented on yet is at revision 1 with no comments.
func ReadReviewState(agentDir string, pr *Proposal) (*ReviewState, error) {
	root, err := os.OpenRoot(agentDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return readReviewState(root, pr)
}

func readReviewState(root *os.Root, pr *Proposal) (*ReviewState, error) {
	b, err := root.ReadFile(ReviewStateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return initialReviewState(pr), nil
	}
	if err != nil {
		return nil, err
	}
	var s ReviewState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", ReviewStateFile, err)
	}
	if s.Revision < 1 || len(s.Revisions) == 0 {
		return nil, fmt.Errorf("%s: no revision recorded", ReviewStateFile)
	}
	if s.Comments == nil {
		s.Comments = []Comment{}
	}
	return &s, nil
}

func initialReviewState(pr *Proposal) *ReviewState {
	s := &ReviewState{Revision: 1, Comments: []Comment{}}
	if pr != nil {
		s.Revisions = []Revision{{Number: 1, CreatedAt: pr.CreatedAt, RunID: pr.RunID}}
	}
	return s
}

func writeReviewState(root *os.Root, s *ReviewState) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(root, ReviewStateFile, append(b, '\n'), 0o644)
}

// AddComments adds comments to a pending proposal (ref as Load takes it) and returns the
// review state with them. Nothing is written when one of them is refused.
func AddComments(workspace, ref string, cs []Comment) (*ReviewState, []Comment, error) {
	var added []Comment
	s, err := updateReview(workspace, ref, func(l *Loaded, s *ReviewState) error {
		if st := readState(l.AgentDir); st != "pending" {
			return fmt.Errorf("proposal %s/%s is %s: comments go on pending proposals", l.Proposal.RunID, l.Proposal.AgentID, st)
		}
		now := time.Now().UTC().Format(timeLayout)
		next := nextCommentNumber(s)
		for _, c := range cs {
			if c.Kind == "" {
				c.Kind = CommentNote
			}
			if err := checkComment(c, l.Proposal); err != nil {
				return err
			}
			c.Path, _ = safepath.Clean(c.Path, safepath.Rules{})
			c.Text = strings.TrimSpace(c.Text)
			c.ID, c.CreatedAt, c.Revision = "c"+strconv.Itoa(next), now, s.Revision
			c.SentIn, c.Answer, c.AnsweredIn = 0, "", 0
			next++
			s.Comments = append(s.Comments, c)
			added = append(added, c)
		}
		return nil
	})
	return s, added, err
}

// DeleteComment removes a comment that has not been sent to the worker yet.
func DeleteComment(workspace, ref, id string) (*ReviewState, error) {
	return updateReview(workspace, ref, func(l *Loaded, s *ReviewState) error {
		i := slices.IndexFunc(s.Comments, func(c Comment) bool { return c.ID == id })
		if i < 0 {
			return fmt.Errorf("proposal %s/%s has no comment %s", l.Proposal.RunID, l.Proposal.AgentID, id)
		}
		if s.Comments[i].SentIn != 0 {
			return fmt.Errorf("comment %s was sent to the worker with revision %d; it stays with the proposal's history", id, s.Comments[i].SentIn)
		}
		s.Comments = slices.Delete(s.Comments, i, i+1)
		return nil
	})
}

// MarkReviewed sets (or clears) the reviewed mark of hunks by their keys (HunkKey).
func MarkReviewed(workspace, ref string, keys []string, reviewed bool) (*ReviewState, error) {
	return updateReview(workspace, ref, func(l *Loaded, s *ReviewState) error {
		for _, k := range keys {
			has := slices.Contains(s.Reviewed, k)
			switch {
			case reviewed && !has:
				s.Reviewed = append(s.Reviewed, k)
			case !reviewed && has:
				s.Reviewed = slices.DeleteFunc(s.Reviewed, func(x string) bool { return x == k })
			}
		}
		slices.Sort(s.Reviewed)
		return nil
	})
}

// updateReview loads ref's proposal, reads its review state, lets change edit it and writes
// it back atomically (only when change succeeds).
func updateReview(workspace, ref string, change func(*Loaded, *ReviewState) error) (*ReviewState, error) {
	// One writer at a time: the editor and a terminal may comment on one proposal at once.
	lock, err := wslock.Acquire(context.Background(), workspace, "updating a proposal's review comments", wslock.Options{})
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	l, err := Load(workspace, ref)
	if err != nil {
		return nil, err
	}
	if l.Proposal == nil || l.AgentDir == "" {
		return nil, fmt.Errorf("%s is a bare patch: comments and revisions need a proposal made from a sandbox", ref)
	}
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	s, err := readReviewState(root, l.Proposal)
	if err != nil {
		return nil, err
	}
	// A revision whose run's process died is settled first, and recorded even when change
	// refuses.
	notice, err := settleInterrupted(workspace, root, l, s)
	if err != nil {
		return nil, err
	}
	if notice != "" {
		s.Notices = append(s.Notices, notice)
		if err := writeReviewState(root, s); err != nil {
			return nil, err
		}
	}
	if err := change(l, s); err != nil {
		return nil, err
	}
	if err := writeReviewState(root, s); err != nil {
		return nil, err
	}
	return s, nil
}

func nextCommentNumber(s *ReviewState) int {
	n := 1
	for _, c := range s.Comments {
		if v, err := strconv.Atoi(strings.TrimPrefix(c.ID, "c")); err == nil && v >= n {
			n = v + 1
		}
	}
	return n
}
