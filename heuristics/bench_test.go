package heuristics

import (
	"testing"
	"time"
)

// benchPairs is a realistic mix of short agent-memory pairs: contradictions
// of every kind, compatible pairs and unrelated siblings, in roughly the
// proportions a sweep over an aspect sees (mostly no signal).
var benchPairs = [][2]string{
	{"Lives in Toronto", "Lives in Vancouver"},
	{"Drinks coffee every morning", "Doesn't drink coffee anymore"},
	{"Likes spicy food", "Dislikes spicy food"},
	{"Uses VS Code as the main editor", "Switched to Neovim as the main editor"},
	{"Uses Slack for team chat", "Now uses Discord for team chat"},
	{"Works at Shopify as a backend engineer", "Works at Stripe as a backend engineer"},
	{"Plays tennis", "Plays the piano"},
	{"Owns a bicycle", "Owns a kayak"},
	{"Reads mystery novels", "Recently started reading poetry"},
	{"Wi-Fi is on in the living room", "The heating is off in the living room"},
	{"Drinks green tea in the afternoon", "Doesn't drink black tea in the afternoon"},
	{"Lives in Toronto", "Lives in downtown Toronto"},
	{"Has a dog named Biscuit", "Is allergic to penicillin"},
	{"Rent is $1,800 a month", "Timezone is PST"},
	{"Speaks French fluently", "Prefers dark mode in the editor"},
	{"Is married to Alex", "Reports to Priya, the VP of Engineering"},
}

func benchInputs() [][2]Input {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	out := make([][2]Input, len(benchPairs))
	for i, p := range benchPairs {
		out[i] = [2]Input{{Content: p[0], CreatedAt: t0}, {Content: p[1], CreatedAt: t0.Add(72 * time.Hour)}}
	}
	return out
}

// BenchmarkDecide: one op is one decision from raw text (both sides
// analysed).
func BenchmarkDecide(b *testing.B) {
	in := benchInputs()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuNanos()
	for i := 0; i < b.N; i++ {
		p := &in[i%len(in)]
		_ = Decide(p[0], p[1])
	}
	reportRates(b, cpu0)
}

// BenchmarkDecideAnalyzed: one op is one decision on prepared statements,
// as the sweep does after analysing each attribute once.
func BenchmarkDecideAnalyzed(b *testing.B) {
	in := benchInputs()
	st := make([][2]*Statement, len(in))
	for i, p := range in {
		st[i] = [2]*Statement{Analyze(p[0]), Analyze(p[1])}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuNanos()
	for i := 0; i < b.N; i++ {
		p := &st[i%len(st)]
		_ = DecideAnalyzed(p[0], p[1])
	}
	reportRates(b, cpu0)
}

// BenchmarkAnalyze: one op analyses one attribute and keeps the result, as
// the sweep does (a discarded result could stay on the stack).
func BenchmarkAnalyze(b *testing.B) {
	in := benchInputs()
	keep := make([]*Statement, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuNanos()
	for i := 0; i < b.N; i++ {
		keep[i%len(keep)] = Analyze(in[i%len(in)][i&1])
	}
	reportRates(b, cpu0)
}

// reportRates adds decisions per wall-clock second and CPU nanoseconds per
// op (see cpuNanos).
func reportRates(b *testing.B, cpu0 int64) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s") // decisions/s for the Decide benchmarks
	if cpu := cpuNanos() - cpu0; cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkAnalyzeKeys: one op is what a full pass spends per attribute in
// the heuristics: Analyze, then BlockKeys (and, in the +content cases,
// ContentKeys), called as the engine calls them and kept, as the engine
// keeps a batch of statements with their keys. corpus cycles through every
// statement of both corpora; generated through the statements of the
// sweep's synthetic memories (mostly "Lives in X", "Speaks Y", "Plays Z",
// as internal/bench writes them).
func BenchmarkAnalyzeKeys(b *testing.B) {
	var gen []Input
	for _, a := range zipfAspects(zipfSpec{attributes: 20000, maxSiblings: 3000, planted: 0.05, seed: 1}, nil) {
		gen = append(gen, a...)
	}
	for _, tc := range []struct {
		name    string
		in      []Input
		content bool
	}{
		{"corpus", corpusInputs(b), false},
		{"generated", gen, false},
		{"corpus+content", corpusInputs(b), true},
		{"generated+content", gen, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			type kept struct {
				st                       *Statement
				anchors, probes, content []Key
			}
			keep := make([]kept, 1024)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuNanos()
			for i := 0; i < b.N; i++ {
				k := &keep[i%len(keep)]
				k.st = Analyze(tc.in[i%len(tc.in)])
				k.anchors, k.probes = k.st.BlockKeys(nil, nil) // as the engine calls them
				if tc.content {
					k.content = k.st.ContentKeys(nil)
				}
			}
			reportRates(b, cpu0)
		})
	}
}
