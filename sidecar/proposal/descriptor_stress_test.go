package proposal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentcanvas/agentcanvas/sidecar/sandbox"
)

// textOfSize is size bytes of distinct lines (text, so the diff is a line diff, not binary).
func textOfSize(size int, seed string) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%s line %d\n", seed, i)
	}
	return b.String()[:size]
}

// stressSizes sit on both sides of the read buffers and the 1 MiB copy threshold.
var stressSizes = []int{0, 1, 4095, 4096, 64<<10 - 1, 64 << 10, 64<<10 + 1, 1<<20 - 1, 1 << 20, 1<<20 + 1, 2<<20 + 3}

// TestCreateAndApplyEveryByteUnderCollector makes proposals that change, add and delete files
// of every threshold size in many folders while the collector (and so every finalizer) runs,
// applies them, and compares the workspace with work/ byte for byte. Run it under -race: a
// descriptor closed by two owners shows up as another file's EBADF or a write in the wrong file.
func TestCreateAndApplyEveryByteUnderCollector(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	rounds := 2
	if testing.Short() {
		rounds = 1
	}
	for r := 0; r < rounds; r++ {
		tree := map[string]string{}
		for d := 0; d < 16; d++ {
			for i, size := range stressSizes {
				if size > 64<<10+1 && d%8 != 0 {
					continue
				}
				tree[fmt.Sprintf("t/d%02d/f%02d.txt", d, i)] = "F:" + textOfSize(size, fmt.Sprintf("r%d d%d f%d", r, d, i))
			}
		}
		ws, paths := prepared(t, tree)
		k := r
		for p := range tree {
			k++
			full := filepath.Join(paths.WorkDir, filepath.FromSlash(p))
			var err error
			switch k % 3 {
			case 0:
				err = os.Remove(full)
			case 1:
				b, _ := os.ReadFile(full)
				err = os.WriteFile(full, append(b, "one more line\n"...), 0o644)
			default:
				err = os.WriteFile(full+".new", []byte(textOfSize(len(tree[p])-2, "new "+p)), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		ctx := context.Background()
		if _, err := Create(ctx, CreateOptions{Workspace: ws, RunID: "run1", AgentID: "custom:coder-1"}); err != nil {
			t.Fatalf("round %d: Create: %v", r, err)
		}
		if _, err := Apply(ctx, ws, filepath.Join(paths.ProposalDir, "proposal.json"), Selection{}, ApplyOptions{}); err != nil {
			t.Fatalf("round %d: Apply: %v", r, err)
		}
		want := gitView(snapshot(t, filepath.Join(paths.WorkDir, "t"), false))
		if d := diffSnapshots(gitView(snapshot(t, filepath.Join(ws, "t"), false)), want); d != "" {
			t.Fatalf("round %d: the workspace differs from work/:\n%s", r, d)
		}
		sandbox.Remove(ws, "run1", "custom:coder-1")
	}
}
