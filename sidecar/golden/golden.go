// Package golden compares a test's output with a file under testdata/ (gopls's marker tests'
// habit): `go test ./pkg -update` rewrites the files from the output, and the diff in review
// is the change of behaviour.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the output")

// Check fails t when got differs from testdata/name (or rewrites it with -update).
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept the new output):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
