package proposal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The reviewed patch is the applied patch. Create records a digest of changes.patch (and of
// each file's part of it) in proposal/digest.json; a review records what it showed in
// proposal/reviewed.json. An apply goes ahead only with a patch that is one of the two, and
// that touches only files proposal.json lists; otherwise it says what changed. proposal.json
// keeps exactly its own keys, so these are files of their own.
const (
	DigestFile   = "proposal/digest.json"
	ReviewedFile = "proposal/reviewed.json"
)

// PatchRecord is digest.json or reviewed.json.
type PatchRecord struct {
	Version int    `json:"version"`
	At      string `json:"at"`
	// Patch is "sha256:<hex>" of changes.patch's bytes.
	Patch string `json:"patch"`
	// Files are the patch's files, each with the digest of its part of the patch.
	Files []FileDigest `json:"files"`
	// Held (reviewed.json) are the held files the review showed.
	Held []string `json:"held,omitempty"`
	// TestsFailed (reviewed.json): the review said the proposal's last tests failed.
	TestsFailed bool `json:"testsFailed,omitempty"`
}

// FileDigest is one file's part of a patch: from its "diff --git" line to the next one.
type FileDigest struct {
	Path   string `json:"path"`
	Digest string `json:"digest"`
}

// PatchDigest is the digest a record keeps of patch bytes.
func PatchDigest(patch []byte) string {
	sum := sha256.Sum256(patch)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// recordOf describes patch: its digest and each file's.
func recordOf(patch []byte) PatchRecord {
	r := PatchRecord{Version: 1, At: time.Now().UTC().Format(timeLayout), Patch: PatchDigest(patch), Files: []FileDigest{}}
	for _, part := range splitSections(patch) {
		r.Files = append(r.Files, FileDigest{Path: partName(part), Digest: PatchDigest(part)})
	}
	return r
}

// partName is the new name a file's part of a patch gives in its "diff --git" line (as git
// quotes it, unquoted where it can be).
func partName(part []byte) string {
	line, _, _ := strings.Cut(string(part), "\n")
	line = strings.TrimPrefix(line, "diff --git ")
	if n := len(line) - 5; n > 0 && n%2 == 0 && line == "a/"+line[2:2+n/2]+" b/"+line[2:2+n/2] {
		return line[2 : 2+n/2] // the same name twice, spaces and " b/" in it or not (as git reads it)
	}
	if strings.HasSuffix(line, `"`) {
		if i := strings.LastIndex(line, ` "b/`); i >= 0 {
			if s, err := strconv.Unquote(line[i+1:]); err == nil {
				return strings.TrimPrefix(s, "b/")
			}
		}
	}
	if i := strings.LastIndex(line, " b/"); i >= 0 {
		return line[i+3:]
	}
	return line
}

// writePatchRecord writes digest.json for the patch create just wrote.
func writePatchRecord(root *os.Root, name string, patch []byte) error {
	b, _ := json.MarshalIndent(recordOf(patch), "", "  ")
	return writeFileAtomic(root, name, append(b, '\n'), 0o644)
}

func readPatchRecord(root *os.Root, name string) *PatchRecord {
	b, err := readRootCapped(root, name, maxJSONBytes)
	if err != nil {
		return nil
	}
	var r PatchRecord
	if json.Unmarshal(b, &r) != nil || !strings.HasPrefix(r.Patch, "sha256:") {
		return nil
	}
	return &r
}

// patchChanged says how l's patch differs from what the person reviewed: the patch reviewed
// (Review.PatchDigest, when the caller passes it), else both the patch the proposal was made
// with and the one a review last recorded. "" when it is the same; warn is set when nothing
// was ever recorded (a proposal made by an older version).
func patchChanged(l *Loaded, reviewed string) (why, warn string) {
	if l.AgentDir == "" || l.Proposal == nil {
		return "", ""
	}
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return "", ""
	}
	defer root.Close()
	made, seen := readPatchRecord(root, DigestFile), readPatchRecord(root, ReviewedFile)
	now := PatchDigest(l.Patch)
	if reviewed != "" {
		if reviewed == now {
			return "", ""
		}
		return "proposal/changes.patch changed since the review you applied from (" + short(reviewed) + " → " + short(now) + "); review it again", ""
	}
	switch {
	case made == nil && seen == nil:
		return "", "the proposal has no record of the patch it was made with (" + DigestFile + "); the patch is applied as it is now"
	case made != nil && made.Patch == now, seen != nil && seen.Patch == now:
		return "", ""
	}
	against := made
	what := "since the proposal was made"
	if seen != nil {
		against, what = seen, "since it was last reviewed (and since it was made)"
	}
	if against == nil {
		against = seen
	}
	return fmt.Sprintf("proposal/changes.patch changed %s: %s; review it again (proposal review) to apply what it holds now", what, describeChange(against, recordOf(l.Patch))), ""
}

// madeChange is a review's warning when l's patch is not the one the proposal was made with.
func madeChange(l *Loaded) string {
	if l.AgentDir == "" || l.Proposal == nil {
		return ""
	}
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return ""
	}
	defer root.Close()
	made := readPatchRecord(root, DigestFile)
	if made == nil || made.Patch == PatchDigest(l.Patch) {
		return ""
	}
	return "proposal/changes.patch is not the patch the proposal was made with: " + describeChange(made, recordOf(l.Patch))
}

func short(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

// describeChange names the files whose part of the patch differs between two records.
func describeChange(was *PatchRecord, now PatchRecord) string {
	old := map[string]string{}
	for _, f := range was.Files {
		old[f.Path] = f.Digest
	}
	var parts []string
	for _, f := range now.Files {
		d, ok := old[f.Path]
		switch {
		case !ok:
			parts = append(parts, ShowName(f.Path)+" is new in it")
		case d != f.Digest:
			parts = append(parts, ShowName(f.Path)+" differs")
		}
		delete(old, f.Path)
	}
	var gone []string
	for p := range old {
		gone = append(gone, ShowName(p)+" is no longer in it")
	}
	slices.Sort(gone)
	parts = append(parts, gone...)
	if len(parts) == 0 {
		return "its bytes differ outside any file's part"
	}
	return strings.Join(parts, ", ")
}

// unlistedFiles are the problems of a plan that touches files proposal.json does not list.
func unlistedFiles(l *Loaded, pl *plan) []Problem {
	if l.Proposal == nil {
		return nil
	}
	listed := map[string]bool{}
	for _, c := range l.Proposal.ChangedFiles {
		listed[c.Path] = true
	}
	var out []Problem
	for _, f := range pl.files {
		for _, p := range uniq(f.OldPath, f.Path) {
			if !listed[p] {
				out = append(out, Problem{Path: p, Reason: "the patch touches this file, but proposal.json does not list it among the changed files (the patch was changed after the proposal was made); review it again"})
			}
		}
	}
	return out
}

// recordReview writes reviewed.json: the patch a review showed, with what it said was held
// and whether it said the tests failed.
func recordReview(l *Loaded, rv *Review) error {
	if l.AgentDir == "" || l.Proposal == nil {
		return nil
	}
	root, err := os.OpenRoot(l.AgentDir)
	if err != nil {
		return err
	}
	defer root.Close()
	r := recordOf(l.Patch)
	for _, h := range rv.Held {
		r.Held = append(r.Held, h.Path)
	}
	r.TestsFailed = rv.Tests.Failed()
	b, _ := json.MarshalIndent(r, "", "  ")
	return writeFileAtomic(root, ReviewedFile, append(b, '\n'), 0o644)
}
