package sandbox

import (
	"regexp"
	"strings"
	"testing"
)

// validRunID replaced a regexp (slow to compile at start-up); it must accept exactly what the
// regexp accepted.
func TestValidRunIDMatchesTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	cases := []string{"", "a", "run_1", "R-2.x", ".a", "_a", "-a", "a b", "a/b", "a:b", "é", "a\x00",
		strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129), "0" + strings.Repeat("_", 127)}
	alphabet := "aZ09._-/ :\x7f\xc3"
	for i := 0; i < 4000; i++ { // every string of up to 4 characters of the alphabet, and more
		var b strings.Builder
		for n := i; n > 0; n /= len(alphabet) {
			b.WriteByte(alphabet[n%len(alphabet)])
		}
		cases = append(cases, b.String())
	}
	for _, c := range cases {
		if got, want := validRunID(c), re.MatchString(c); got != want {
			t.Errorf("validRunID(%q) = %v, the regexp says %v", c, got, want)
		}
	}
}
