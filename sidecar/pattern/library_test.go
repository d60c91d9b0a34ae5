package pattern

import "testing"

func TestLibraryLoads(t *testing.T) {
	if err := Err(); err != nil {
		t.Fatal(err)
	}
	if got := len(All()); got != 20 {
		t.Fatalf("All() has %d patterns, want 20", got)
	}
}
