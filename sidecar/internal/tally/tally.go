// Package tally adds up token counts and costs without overflow. Every total the sidecar
// keeps of what agents spent (the gateway's ledger, the engine's spend, a command agent's
// USAGE: lines, the CLIs' own reports) is added here: a total stops at MaxTokens or MaxUSD
// instead of wrapping round to a negative number that no limit would ever reach.
//
// A single report is checked first (Report): a negative count, or one larger than any model
// call could be, is refused with a reason, for the caller to warn of.
package tally

import (
	"fmt"
	"math"
)

// MaxTokens is where a token total stops: the largest integer a JSON reader in JavaScript
// (the editor) reads exactly, and far beyond any run's spend.
const MaxTokens int64 = 1<<53 - 1

// MaxUSD is where a cost total stops.
const MaxUSD = 1e12

// AbsurdTokens is the most tokens one report may count: a whole session's cache reads stay
// far below it, a corrupt or hostile report does not.
const AbsurdTokens int64 = 10_000_000_000

// AbsurdUSD is the most US dollars one report may count.
const AbsurdUSD = 1_000_000.0

// Add is a+b for token counts ≥ 0, stopping at MaxTokens (a negative operand counts as 0).
func Add(a, b int64) int64 {
	a, b = max(a, 0), max(b, 0)
	if a > MaxTokens-b {
		return MaxTokens
	}
	return a + b
}

// Sum adds every count with Add.
func Sum(ns ...int64) int64 {
	var t int64
	for _, n := range ns {
		t = Add(t, n)
	}
	return t
}

// Mul is a×b for counts ≥ 0, stopping at MaxTokens.
func Mul(a, b int64) int64 {
	a, b = max(a, 0), max(b, 0)
	if a != 0 && b > MaxTokens/a {
		return MaxTokens
	}
	return a * b
}

// Sub is a-b for token totals, never below 0 (a reservation given back, say).
func Sub(a, b int64) int64 {
	if b >= a {
		return 0
	}
	return a - max(b, 0)
}

// AddUSD is a+b for costs ≥ 0, stopping at MaxUSD (a negative or NaN operand counts as 0).
func AddUSD(a, b float64) float64 {
	return min(USD(a)+USD(b), MaxUSD)
}

// SubUSD is a-b for cost totals, never below 0.
func SubUSD(a, b float64) float64 {
	return max(USD(a)-USD(b), 0)
}

// USD is x as a cost: 0 for a negative or NaN value, MaxUSD at most.
func USD(x float64) float64 {
	if !(x > 0) { // NaN too
		return 0
	}
	return min(x, MaxUSD)
}

// Report checks one report's token counts and cost (nil: none given): "" when they can be
// counted, otherwise why not.
func Report(tokens []int64, cost *float64) string {
	for _, n := range tokens {
		switch {
		case n < 0:
			return fmt.Sprintf("a token count of %d is negative", n)
		case n > AbsurdTokens:
			return fmt.Sprintf("a token count of %d is more than any model call could use (%d at most)", n, AbsurdTokens)
		}
	}
	if cost != nil {
		switch c := *cost; {
		case math.IsNaN(c) || math.IsInf(c, 0) || c < 0:
			return fmt.Sprintf("a cost of %v is not a number of US dollars ≥ 0", c)
		case c > AbsurdUSD:
			return fmt.Sprintf("a cost of $%.0f is more than any model call could cost ($%.0f at most)", c, AbsurdUSD)
		}
	}
	var total int64
	for _, n := range tokens {
		total = Add(total, n)
	}
	if total > AbsurdTokens {
		return fmt.Sprintf("the token counts add up to %d, more than any model call could use (%d at most)", total, AbsurdTokens)
	}
	return ""
}
