package proposal

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// gitMerge is real git's verdict on proposals made from ws's commit: a clone where branch A
// has every patch of as applied, branch B every one of bs, and B merged into A (rename
// detection off: proposals add and delete, they do not rename). It returns the clone and the
// paths git could not merge.
func gitMerge(t *testing.T, ws string, as, bs []*Created) (string, map[string]bool) {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		out, err := run(t, dir, "git", args...)
		if err != nil && args[0] != "merge" {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return out
	}
	git("clone", "-q", ws, ".")
	base := strings.TrimSpace(git("rev-parse", "HEAD"))
	for _, br := range []struct {
		name string
		cs   []*Created
	}{{"A", as}, {"B", bs}} {
		git("checkout", "-q", "-b", br.name, base)
		for _, c := range br.cs {
			if len(c.Proposal.ChangedFiles) > 0 { // an agent may change nothing
				git("apply", "--index", filepath.Join(c.AgentDir, filepath.FromSlash(PatchFile)))
			}
		}
		git("commit", "-q", "--allow-empty", "-m", br.name)
	}
	git("checkout", "-q", "A")
	git("merge", "-q", "--no-edit", "-s", "ort", "-X", "no-renames", "B")
	unmerged := map[string]bool{}
	for _, p := range strings.Fields(git("diff", "--name-only", "--diff-filter=U")) {
		unmerged[p] = true
	}
	return dir, unmerged
}

// under keeps the entries of a tree view under folder dir/.
func under(view map[string]string, dir string) map[string]string {
	out := map[string]string{}
	for k, v := range view {
		if strings.HasPrefix(k, dir+"/") {
			out[k] = v
		}
	}
	return out
}

// exportOf exports run and applies the patch with `git apply --index` in clone; it returns
// the export's error (nil: applied).
func exportOf(t *testing.T, ws, runID, clone string) (*Exported, error) {
	t.Helper()
	ex, err := Export(context.Background(), ws, runID, ExportOptions{})
	if err != nil {
		return nil, err
	}
	patch := filepath.Join(t.TempDir(), "run.patch")
	if err := os.WriteFile(patch, ex.Patch, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, ws, "git", "apply", "--check", patch); err != nil {
		t.Fatalf("git apply --check of run %s's export in the workspace: %v %s\n%s", runID, err, out, ex.Patch)
	}
	if out, err := run(t, clone, "git", "apply", "--index", patch); err != nil {
		t.Fatalf("git apply of run %s's export: %v %s\n%s", runID, err, out, ex.Patch)
	}
	return ex, nil
}

// One case of the rule: what two agents do, what create reports from the second's side and
// whether export combines them. Each case marked "was" differed between create and export
// before the two shared one rule.
type ruleCase struct {
	name  string
	was   string // how create and export disagreed before (empty: they agreed)
	a, b  edits
	kinds []string // create's collision kinds, from b's side; none: export must combine
}

var ruleBase = map[string]string{
	"f.txt":    "F:" + lines(1, 12, "line %d\n"),
	"run.sh":   "X:#!/bin/sh\n" + lines(1, 10, "echo %d\n"),
	"logo.bin": "F:\x00\x01old\x00",
	"ln":       "L:f.txt",
	"gone.txt": "F:gone\n",
}

var ruleCases = []ruleCase{
	{name: "the same line changed alike, other lines apart", was: "export refused identical changes",
		a: edits{"f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 5\n", "five\n", 1)},
		b: edits{"f.txt": "F:" + strings.Replace(strings.Replace(lines(1, 12, "line %d\n"), "line 5\n", "five\n", 1), "line 9\n", "nine\n", 1)}},
	{name: "the same proposal twice", was: "export refused identical changes",
		a: edits{"f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 2\n", "two\n", 1)},
		b: edits{"f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 2\n", "two\n", 1)}},
	{name: "both delete a file", was: "export refused: both delete it",
		a: edits{"gone.txt": ""}, b: edits{"gone.txt": "", "new.txt": "F:new\n"}},
	{name: "both add a file alike", was: "export refused: both add it",
		a: edits{"new.txt": "F:same\n"}, b: edits{"new.txt": "F:same\n", "f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 1\n", "one\n", 1)}},
	{name: "a mode change beside line edits", was: "export refused any mode change on a shared path",
		a: edits{"run.sh": "chmod:644"},
		b: edits{"run.sh": "X:#!/bin/sh\n" + strings.Replace(lines(1, 10, "echo %d\n"), "echo 7\n", "echo seven\n", 1)}},
	{name: "the same mode change, lines apart", was: "export refused any mode change on a shared path",
		a: edits{"run.sh": "F:#!/bin/sh\n" + strings.Replace(lines(1, 10, "echo %d\n"), "echo 1\n", "echo one\n", 1)},
		b: edits{"run.sh": "F:#!/bin/sh\n" + strings.Replace(lines(1, 10, "echo %d\n"), "echo 9\n", "echo nine\n", 1)}},
	{name: "the same binary change", was: "export refused any shared binary file",
		a: edits{"logo.bin": "F:\x00\x02new\x00"}, b: edits{"logo.bin": "F:\x00\x02new\x00", "gone.txt": ""}},
	{name: "the same symlink change", was: "export refused any shared symlink",
		a: edits{"ln": "L:run.sh"}, b: edits{"ln": "L:run.sh"}},
	{name: "a file where the other puts a folder", was: "create reported no collision",
		a: edits{"out": "F:a file\n"}, b: edits{"out/x.txt": "F:in a folder\n"}, kinds: []string{CollideFolderFile}},
	{name: "a folder where the other keeps a file", was: "create reported no collision",
		a: edits{"gone.txt": "", "gone.txt/x.txt": "F:in a folder\n"}, b: edits{"gone.txt": "F:kept, edited\n"},
		kinds: []string{CollideEditDelete, CollideFileFolder}},
	{name: "adjacent lines",
		a: edits{"f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 5\n", "five\n", 1)},
		b: edits{"f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 6\n", "six\n", 1)}, kinds: []string{CollideLines}},
	{name: "one line between",
		a: edits{"f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 5\n", "five\n", 1)},
		b: edits{"f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 7\n", "seven\n", 1)}},
	{name: "different binary changes", a: edits{"logo.bin": "F:\x00a"}, b: edits{"logo.bin": "F:\x00b"}, kinds: []string{CollideWholeFile}},
	{name: "delete and edit", a: edits{"gone.txt": ""}, b: edits{"gone.txt": "F:edited\n"}, kinds: []string{CollideEditDelete}},
	{name: "both add differently", a: edits{"new.txt": "F:a\n"}, b: edits{"new.txt": "F:b\n"}, kinds: []string{CollideBothAdd}},
	{name: "a type change and an edit", a: edits{"f.txt": "L:run.sh"},
		b: edits{"f.txt": "F:" + strings.Replace(lines(1, 12, "line %d\n"), "line 5\n", "five\n", 1)}, kinds: []string{CollideWholeFile}},
}

// One regression per rule on which create and export disagreed, and the rules they agreed on:
// create's collisions (from the second proposal's side) are exactly the kinds expected, export
// refuses exactly then (naming the same paths), and otherwise its patch applies with real git
// to the tree git's own merge of the two proposals makes.
func TestCreateAndExportShareOneRule(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.name, func(t *testing.T) {
			tree := map[string]string{}
			for k, v := range ruleBase {
				tree[k] = v
			}
			ws := gitRepo(t, tree)
			a := proposeIn(t, ws, exportRun, "a", tc.a)
			b := proposeIn(t, ws, exportRun, "b", tc.b)
			if len(a.Collisions) != 0 {
				t.Fatalf("the first proposal collides: %+v", a.Collisions)
			}
			var kinds []string
			for _, c := range b.Collisions {
				kinds = append(kinds, c.Kind)
			}
			sort.Strings(kinds)
			if !slices.Equal(kinds, tc.kinds) {
				t.Fatalf("create: collisions %+v, want kinds %v (before: %s)", b.Collisions, tc.kinds, tc.was)
			}
			merged, unmerged := gitMerge(t, ws, []*Created{a}, []*Created{b})
			clone := t.TempDir()
			if out, err := run(t, clone, "git", "clone", "-q", ws, "."); err != nil {
				t.Fatalf("clone: %v %s", err, out)
			}
			ex, err := exportOf(t, ws, exportRun, clone)
			if len(tc.kinds) > 0 {
				var ce *ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("export: %v, want a conflict (create: %+v)", err, b.Collisions)
				}
				if len(unmerged) == 0 {
					t.Errorf("git merges what export refuses: %v", err)
				}
				if got, want := conflictPaths(ce), collisionPaths(b.Collisions); !slices.Equal(got, want) {
					t.Errorf("export's conflicts are at %v, create's collisions at %v", got, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("export refuses what create calls no collision (before: %s): %v", tc.was, err)
			}
			if len(unmerged) > 0 {
				t.Fatalf("export combines what git cannot merge: %v", unmerged)
			}
			if d := diffSnapshots(gitView(snapshot(t, clone, true)), gitView(snapshot(t, merged, true))); d != "" {
				t.Errorf("the export's tree differs from git's merge:\n%s\n%s", d, ex.Patch)
			}
			if tc.name == "the same proposal twice" && (len(ex.Proposals) != 1 || len(ex.Skipped) != 1 || !strings.Contains(ex.Skipped[0], "already made by the proposals before it")) {
				t.Errorf("a proposal with nothing left to add: %+v, skipped %q", ex.Proposals, ex.Skipped)
			}
		})
	}
}

// conflictPaths and collisionPaths: the files a refusal and a collision list name (a file
// against a folder: the file).
func conflictPaths(ce *ConflictError) []string {
	var out []string
	for _, c := range ce.Conflicts {
		out = append(out, c.Path)
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

func collisionPaths(cs []Collision) []string {
	var out []string
	for _, c := range cs {
		if c.Kind == CollideFolderFile {
			out = append(out, c.OtherPath)
		} else {
			out = append(out, c.Path)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// randomSide is what one agent does to a case's files (under dir/): line edits of t.txt, with
// or without its mode flipped; deleting it; making it a symlink; a binary file, a symlink and a
// new file changed to one of two versions; a file or a folder at out. Small choices, so that
// the two agents often do the same thing, or touch the same lines.
func randomSide(r *rand.Rand, dir string, base []string) edits {
	e := edits{}
	text := slices.Clone(base)
	for n := 1 + r.IntN(3); n > 0; n-- {
		switch r.IntN(10) {
		case 0:
			e[dir+"/t.txt"] = ""
		case 1:
			e[dir+"/t.txt"] = "L:bin.dat"
		case 2:
			e[dir+"/bin.dat"] = "F:\x00" + []string{"one", "two"}[r.IntN(2)]
		case 3:
			e[dir+"/ln"] = "L:" + []string{"t.txt", "bin.dat"}[r.IntN(2)]
		case 4:
			e[dir+"/new.txt"] = "F:" + []string{"same\n", "other\n"}[r.IntN(2)]
		case 5:
			_, file := e[dir+"/out"]
			_, folder := e[dir+"/out/x.txt"]
			switch {
			case file || folder:
			case r.IntN(2) == 0:
				e[dir+"/out"] = "F:a file\n"
			default:
				e[dir+"/out/x.txt"] = "F:in a folder\n"
			}
		default:
			at := r.IntN(len(text))
			switch r.IntN(3) {
			case 0:
				text[at] = fmt.Sprintf("changed %d\n", r.IntN(2))
			case 1:
				text = slices.Insert(text, at, fmt.Sprintf("inserted %d\n", r.IntN(2)))
			default:
				text = slices.Delete(text, at, at+1)
			}
			kind := "X:"
			if r.IntN(4) == 0 {
				kind = "F:" // the mode flipped too
			}
			if _, gone := e[dir+"/t.txt"]; !gone {
				e[dir+"/t.txt"] = kind + strings.Join(text, "")
			}
		}
	}
	return e
}

// Many generated pairs of proposals, each pair a run of its own in one workspace: the rule is
// symmetric (list, from the first's side), create's collisions (from the second's side) and
// export agree — export refuses exactly when create
// reports a collision, naming the same files — and what export combines applies with real
// `git apply` to the tree real `git merge` makes of the two; what it refuses, git cannot merge
// either.
func TestCreateAndExportAgree(t *testing.T) {
	cases := 60
	if testing.Short() {
		cases = 20
	}
	r := rand.New(rand.NewPCG(23, 5))
	tree := map[string]string{}
	bases := make([][]string, cases)
	for i := range cases {
		dir := fmt.Sprintf("c%02d", i)
		for k := 1; k <= 8; k++ {
			bases[i] = append(bases[i], fmt.Sprintf("%s line %d\n", dir, k))
		}
		tree[dir+"/t.txt"] = "X:" + strings.Join(bases[i], "")
		tree[dir+"/bin.dat"] = "F:\x00zero"
		tree[dir+"/ln"] = "L:t.txt"
	}
	ws := gitRepo(t, tree)
	var as, bs []*Created
	for i := range cases {
		dir, runID := fmt.Sprintf("c%02d", i), fmt.Sprintf("run_20261124-120000_%06x", i)
		as = append(as, proposeIn(t, ws, runID, "a", randomSide(r, dir, bases[i])))
		bs = append(bs, proposeIn(t, ws, runID, "b", randomSide(r, dir, bases[i])))
	}
	// The rule is symmetric: list's conflicts of each first proposal name the second exactly
	// when the second's create reported a collision with it.
	sums, err := List(ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		i := slices.IndexFunc(as, func(c *Created) bool { return c.Proposal.RunID == s.RunID })
		if s.AgentID == "a" && (len(s.Conflicts) > 0) != (len(bs[i].Collisions) > 0) {
			t.Errorf("%s: a's conflicts %+v, but b's collisions %+v", s.RunID, s.Conflicts, bs[i].Collisions)
		}
	}
	merged, unmerged := gitMerge(t, ws, as, bs)
	clone := t.TempDir()
	if out, err := run(t, clone, "git", "clone", "-q", ws, "."); err != nil {
		t.Fatalf("clone: %v %s", err, out)
	}
	collided := 0
	for i := range cases {
		dir, runID := fmt.Sprintf("c%02d", i), fmt.Sprintf("run_20261124-120000_%06x", i)
		gitConflict := false
		for p := range unmerged {
			gitConflict = gitConflict || strings.HasPrefix(p, dir+"/")
		}
		_, err := exportOf(t, ws, runID, clone)
		var ce *ConflictError
		switch {
		case len(bs[i].Collisions) > 0:
			collided++
			if !errors.As(err, &ce) {
				t.Errorf("%s: create reports %+v, export: %v", dir, bs[i].Collisions, err)
			} else if got, want := conflictPaths(ce), collisionPaths(bs[i].Collisions); !slices.Equal(got, want) {
				t.Errorf("%s: export's conflicts are at %v, create's collisions at %v", dir, got, want)
			}
			if !gitConflict {
				t.Errorf("%s: git merges what create and export call a collision: %+v", dir, bs[i].Collisions)
			}
		case err != nil:
			t.Errorf("%s: create reports no collision, export: %v", dir, err)
		case gitConflict:
			t.Errorf("%s: export combines what git cannot merge (%v)", dir, unmerged)
		default:
			if d := diffSnapshots(under(gitView(snapshot(t, clone, true)), dir), under(gitView(snapshot(t, merged, true)), dir)); d != "" {
				t.Errorf("%s: the export's tree differs from git's merge:\n%s", dir, d)
			}
		}
	}
	t.Logf("%d pairs: %d collide, %d combine", cases, collided, cases-collided)
	if collided == 0 || collided == cases {
		t.Errorf("the generated pairs do not cover both outcomes (%d of %d collide)", collided, cases)
	}
}
