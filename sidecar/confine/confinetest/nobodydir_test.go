package confinetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A clone under a folder only its owner may enter, with files only their owner may read:
// the run as nobody gets a working folder where it reads the package's files, go.mod,
// package.json and runs the agent CLI through node_modules/.bin, as from the clone.
func TestNobodyWorkdirOfAPrivateClone(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root runs tests again as nobody")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	private := t.TempDir()
	os.Chmod(private, 0o700)
	repo := filepath.Join(private, "clone")
	files := map[string]string{
		"go.mod":                      "module x\n",
		"package.json":                "{}\n",
		"sidecar/pkg/testdata/in.txt": "data\n",
		"node_modules/@anthropic-ai/claude-code/bin/claude.exe": "#!/bin/sh\necho 2.1.330\n",
		"node_modules/left-pad/index.js":                        "not copied\n",
	}
	for name, body := range files {
		p := filepath.Join(repo, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		mode := os.FileMode(0o600)
		if filepath.Ext(name) == ".exe" {
			mode = 0o700
		}
		os.WriteFile(p, []byte(body), mode)
	}
	os.MkdirAll(filepath.Join(repo, "node_modules", ".bin"), 0o700)
	os.Symlink("../@anthropic-ai/claude-code/bin/claude.exe", filepath.Join(repo, "node_modules", ".bin", "claude"))
	t.Chdir(filepath.Join(repo, "sidecar", "pkg"))

	dir, err := os.MkdirTemp(sharedTemp(), "as-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	wd, err := nobodyWorkdir(dir)
	if err != nil || wd == filepath.Join(repo, "sidecar", "pkg") {
		t.Fatalf("workdir %s: %v", wd, err)
	}
	asNobody := func(args ...string) (string, error) {
		c := exec.Command("setpriv", append([]string{"--reuid", strconv.Itoa(nobody), "--regid", strconv.Itoa(nobody), "--clear-groups", "--"}, args...)...)
		c.Dir = wd
		out, err := c.CombinedOutput()
		return string(out), err
	}
	for _, args := range [][]string{
		{"cat", "testdata/in.txt", "../../go.mod", "../../package.json"},
		{"../../node_modules/.bin/claude"},
	} {
		if out, err := asNobody(args...); err != nil {
			t.Errorf("as nobody, %v: %v\n%s", args, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(wd, "..", "..", "node_modules", "left-pad")); err == nil {
		t.Error("a package that is not an agent CLI's was copied")
	}
	if out, err := asNobody("cat", filepath.Join(repo, "go.mod")); err == nil {
		t.Errorf("the clone itself is readable by nobody, the test proves nothing: %s", out)
	}
}
