package runtime

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// attackBin is testdata/attack built with the system's C compiler, readable by everyone (the
// nobody rerun finds it through attackEnv); "" where there is no C compiler.
var attackBin string

const attackEnv = "AGENTCANVAS_TEST_ATTACK"

// buildAttacker builds the attacker once, before the tests; it returns its folder.
func buildAttacker() string {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return ""
	}
	dir, err := os.MkdirTemp("", "runtime-attack-")
	if err != nil {
		return ""
	}
	bin := filepath.Join(dir, "attack")
	if out, err := exec.Command(cc, "-O1", "-o", bin, "testdata/attack/attack.c").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the attacker: %v\n%s", err, out)
		os.RemoveAll(dir)
		return ""
	}
	if os.Chmod(dir, 0o755) != nil {
		os.RemoveAll(dir)
		return ""
	}
	attackBin = bin
	os.Setenv(attackEnv, bin)
	return dir
}

// needAttacker skips a test without the attacker.
func needAttacker(t *testing.T) {
	t.Helper()
	if attackBin == "" {
		t.Skip("no C compiler (cc) to build testdata/attack")
	}
}
