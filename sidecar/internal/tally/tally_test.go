package tally

import (
	"math"
	"strings"
	"testing"
)

// Totals stop at their cap instead of wrapping round, and a negative or NaN operand adds
// nothing.
func TestSaturates(t *testing.T) {
	if got := Add(math.MaxInt64, math.MaxInt64); got != MaxTokens {
		t.Errorf("Add: %d", got)
	}
	if got := Sum(1<<62, 1<<62, 1<<62); got != MaxTokens {
		t.Errorf("Sum: %d", got)
	}
	if got := Add(5, -3); got != 5 {
		t.Errorf("Add(5, -3): %d", got)
	}
	if got := Mul(1<<40, 1<<40); got != MaxTokens {
		t.Errorf("Mul: %d", got)
	}
	if got := Sub(3, 5); got != 0 {
		t.Errorf("Sub: %d", got)
	}
	if got := AddUSD(1e300, 1e300); got != MaxUSD {
		t.Errorf("AddUSD: %v", got)
	}
	if got := AddUSD(1, math.NaN()); got != 1 {
		t.Errorf("AddUSD NaN: %v", got)
	}
	if got := SubUSD(1, 2); got != 0 {
		t.Errorf("SubUSD: %v", got)
	}
}

// A report's counts are refused when negative, absurd, or absurd together; a cost when it
// is not a number of dollars ≥ 0 or is absurd.
func TestReport(t *testing.T) {
	nan, neg, big, ok := math.NaN(), -1.0, 2e6, 0.5
	for _, c := range []struct {
		tokens []int64
		cost   *float64
		want   string
	}{
		{[]int64{1000, 200}, &ok, ""},
		{[]int64{-3}, nil, "negative"},
		{[]int64{AbsurdTokens + 1}, nil, "more than any model call"},
		{[]int64{AbsurdTokens, AbsurdTokens}, nil, "add up to"},
		{nil, &nan, "not a number"},
		{nil, &neg, "not a number"},
		{nil, &big, "more than any model call could cost"},
	} {
		got := Report(c.tokens, c.cost)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%v %v: %q, want %q", c.tokens, c.cost, got, c.want)
		}
	}
}
