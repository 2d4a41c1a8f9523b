package main

import (
	"fmt"
	"time"

	"github.com/supersessiond/supersessiond/heuristics"
)

// benchHeuristics decides a realistic mix of pairs (same-slot changes,
// many-value additions, negations, unrelated facts) on one goroutine for d
// and returns decisions and decisions per second.
func benchHeuristics(d time.Duration) (int, float64) {
	mix := [][2]string{
		{"Lives in Toronto", "Lives in Vancouver"},
		{"Speaks French", "Speaks Japanese"},
		{"Is vegetarian", "Is no longer vegetarian"},
		{"Works at Shopify as a backend engineer", "Works at Stripe"},
		{"Plays tennis on Saturdays", "Plays the piano"},
		{"Prefers dark mode in the editor", "Prefers light mode in the editor"},
		{"Drinks green tea in the afternoon", "Doesn't drink black tea in the afternoon"},
		{"Reads mystery novels", "Recently started reading poetry"},
		{"Uses VS Code as the main editor", "Switched to Neovim as the main editor"},
		{"Has a dog named Rex", "Owns a kayak"},
		{"Rent is $2,100 a month", "Rent is $2,350 a month"},
		{"Visited Kyoto in 2019", "Knows Priya from the Lisbon office"},
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	inputs := make([][2]heuristics.Input, len(mix))
	for i, m := range mix {
		inputs[i] = [2]heuristics.Input{{Content: m[0], CreatedAt: t0}, {Content: m[1], CreatedAt: t0.Add(72 * time.Hour)}}
	}
	n := 0
	start := time.Now()
	var sink float64
	for time.Since(start) < d {
		for i := 0; i < 1000; i++ {
			p := inputs[n%len(inputs)]
			sink += heuristics.Decide(p[0], p[1]).Confidence
			n++
		}
	}
	if sink < 0 {
		fmt.Println(sink)
	}
	return n, float64(n) / time.Since(start).Seconds()
}
