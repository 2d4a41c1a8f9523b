package heuristics

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// This file sweeps synthetic memories the way the supersession engine does,
// once over all pairs of each aspect and once over the candidate pairs that
// BlockKeys and ContentKeys yield, to measure what blocking saves and to
// check that it finds the same pairs.

// zipfSpec shapes a synthetic memory: aspect sizes follow a Zipf law (most
// aspects hold one or two attributes, a few thousands), a share of each
// aspect is planted contradictions on one-value slots, and the rest are
// many-valued statements; mixShare of the fillers are statements of the
// corpora instead (negations, changes, antonyms: the statements that make
// candidates).
type zipfSpec struct {
	attributes  int
	maxSiblings int
	planted     float64
	mixShare    float64
	seed        uint64
}

// zipfAspects generates the aspects of spec, oldest attribute first.
func zipfAspects(spec zipfSpec, corpus []Input) [][]Input {
	r := rand.New(rand.NewPCG(spec.seed, 0x5eed))
	zipf := rand.NewZipf(r, 1.3, 1, uint64(spec.maxSiblings-1))
	slots, many := zipfStatements()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var out [][]Input
	for total := 0; total < spec.attributes; {
		n := min(int(zipf.Uint64())+1, spec.attributes-total)
		total += n
		want := min(int(float64(n)*spec.planted+r.Float64()), len(slots), n/2)
		perm := r.Perm(len(slots))
		var olds, news []string
		for c := 0; c < want; c++ {
			v := r.IntN(1000)
			olds, news = append(olds, slots[perm[c]](v)), append(news, slots[perm[c]](v+1))
		}
		offset := r.IntN(1 << 20)
		for f := 0; len(olds)+len(news) < n; f++ {
			if r.Float64() < spec.mixShare {
				olds = append(olds, corpus[r.IntN(len(corpus))].Content)
			} else {
				olds = append(olds, many(offset+f))
			}
		}
		r.Shuffle(len(olds), func(i, j int) { olds[i], olds[j] = olds[j], olds[i] })
		aspect := make([]Input, 0, n)
		for k, c := range append(olds, news...) {
			aspect = append(aspect, Input{Content: c, CreatedAt: base.Add(time.Duration(len(out))*time.Second + time.Duration(k)*time.Hour)})
		}
		out = append(out, aspect)
	}
	return out
}

// zipfStatements returns the makers of zipfAspects' statements: one-value
// slots (the i-th value of each) and many-valued statements (the n-th).
func zipfStatements() (slots []func(i int) string, many func(n int) string) {
	cities := strings.Fields("Toronto Vancouver Montreal Calgary Ottawa Lisbon Porto Madrid Barcelona Berlin Munich Hamburg Vienna Zurich Geneva Paris Lyon Brussels Amsterdam Copenhagen Oslo Stockholm Helsinki Riga Warsaw Prague Budapest Athens Rome Milan Dublin Edinburgh London Boston Chicago Denver Austin Seattle Tokyo Osaka Seoul Taipei Singapore Sydney Auckland Lima Bogota Nairobi Lagos Cairo Istanbul Mumbai Delhi Hanoi Manila Jakarta")
	people := strings.Fields("Dana Priya Alex Jordan Morgan Casey Riley Avery Quinn Rowan Sasha Kai Noor Amari Imani Tomas Lucia Mateo Sofia Yuki Arjun Ananya Chen Wei Olga Ivan Lena Jonas Freya Emil")
	companies := strings.Fields("Shopify Stripe Figma Atlassian Canva Spotify Klarna Adyen Zalando Booking Monzo Revolut Wise Grab Rakuten Naver Infosys Nubank Globant Notion Linear Vercel GitLab Datadog Cloudflare")
	languages := strings.Fields("French Japanese Korean Spanish Portuguese German Italian Dutch Swedish Polish Greek Turkish Arabic Hindi Tamil Swahili Mandarin Thai Russian Finnish")
	foods := strings.Fields("olives figs mangoes lychees kimchi miso tempeh halloumi brie gouda sourdough bagels churros baklava mochi gelato sorbet granola")
	items := strings.Fields("bicycle kayak telescope drone piano violin guitar cello turntable camera tent hammock skateboard snowboard surfboard tablet")
	games := strings.Fields("tennis squash badminton chess go poker bridge volleyball basketball football hockey golf cricket rugby darts bowling")
	editors := strings.Fields("Neovim Emacs Helix Zed Sublime IntelliJ Xcode Kakoune Nano")
	favs := strings.Fields("food band book movie colour season drink podcast painter")
	slots = []func(i int) string{
		func(i int) string { return "Lives in " + cities[i%len(cities)] },
		func(i int) string { return "Works at " + companies[i%len(companies)] },
		func(i int) string { return "Reports to " + people[i%len(people)] },
		func(i int) string { return "Main editor is " + editors[i%len(editors)] },
		func(i int) string { return "Is married to " + people[(i+7)%len(people)] },
		func(i int) string { return fmt.Sprintf("Rent is $%d a month", 1200+i*75) },
	}
	for _, f := range favs {
		slots = append(slots, func(i int) string { return fmt.Sprintf("Favourite %s is %s", f, foods[i%len(foods)]) })
	}
	suffix := func(round int) string {
		if round == 0 {
			return ""
		}
		return " with friends from " + cities[round%len(cities)]
	}
	many = func(n int) string {
		k := n / 6
		switch n % 6 {
		case 0:
			return fmt.Sprintf("Visited %s in %d", cities[k%len(cities)], 2008+(k/len(cities))%18)
		case 1:
			return fmt.Sprintf("Knows %s from the %s office", people[k%len(people)], cities[(k/len(people))%len(cities)])
		case 2:
			return "Speaks " + languages[k%len(languages)] + suffix(k/len(languages))
		case 3:
			return "Likes " + foods[k%len(foods)] + suffix(k/len(foods))
		case 4:
			return "Owns a " + items[k%len(items)] + suffix(k/len(items))
		}
		return "Plays " + games[k%len(games)] + suffix(k/len(games))
	}
	return slots, many
}

// sweepStats is what a sweep found.
type sweepStats struct {
	attributes, pairs int
	candidates        int // pairs whose blocking keys meet
	fired             int // pairs (older, newer) where a signal fires
	semantic          int // pairs that fire nothing and share at least 3 content words
	semanticLists     int // content-key postings visited to find them
}

func (s sweepStats) String() string {
	return fmt.Sprintf("%d attributes, %d pairs: %d candidates (%.4f%%), %d fire; %d pairs for the semantic fallback (%d postings visited)",
		s.attributes, s.pairs, s.candidates, 100*float64(s.candidates)/float64(max(s.pairs, 1)), s.fired, s.semantic, s.semanticLists)
}

// sweepBlocked decides the candidate pairs of one aspect (oldest first), as
// an engine would: index the probes (about one per statement), look each
// statement's anchors up (ten to twenty), and decide each candidate pair
// once, older first; then find the pairs for the semantic fallback by
// counting shared content keys. fired receives the pairs (i older, j newer)
// where a signal fires.
func sweepBlocked(aspect []Input, s *sweepStats, fired func(i, j int)) {
	n := len(aspect)
	s.attributes += n
	s.pairs += n * (n - 1) / 2
	if n < 2 {
		return
	}
	st := make([]*Statement, n)
	anchors := make([][]Key, n)
	probers := map[Key][]int32{}
	var p []Key
	for i, in := range aspect {
		st[i] = Analyze(in)
		anchors[i], p = st[i].BlockKeys(nil, p[:0])
		for _, k := range p {
			probers[k] = append(probers[k], int32(i))
		}
	}
	// A pair meets when a probe of one is an anchor of the other: every
	// such pair is found from the anchors' side, perhaps several times.
	var pairs []uint64
	for i := range st {
		for _, k := range anchors[i] {
			for _, j := range probers[k] {
				if int(j) != i {
					lo, hi := min(int32(i), j), max(int32(i), j)
					pairs = append(pairs, uint64(lo)<<32|uint64(hi))
				}
			}
		}
	}
	slices.Sort(pairs)
	pairs = slices.Compact(pairs)
	isFired := map[[2]int32]bool{}
	for _, pr := range pairs {
		older, newer := int(pr>>32), int(uint32(pr))
		s.candidates++
		if d := DecideAnalyzed(st[older], st[newer]); d.Confidence > 0 {
			s.fired++
			isFired[[2]int32{int32(older), int32(newer)}] = true
			if fired != nil {
				fired(older, newer)
			}
		}
	}
	semanticPairs(st, isFired, s)
}

// semanticPairs finds the pairs for the semantic fallback of one aspect,
// oldest first: those sharing at least three content keys that no signal
// fired on, counted through an inverted index of content keys.
func semanticPairs(st []*Statement, isFired map[[2]int32]bool, s *sweepStats) {
	n := len(st)
	postings := map[Key][]int32{}
	count := make([]int32, n)
	var ck []Key
	for j := range st {
		ck = st[j].ContentKeys(ck[:0])
		var touched []int32
		for _, k := range ck {
			for _, i := range postings[k] {
				s.semanticLists++
				if count[i] == 0 {
					touched = append(touched, i)
				}
				count[i]++
			}
			postings[k] = append(postings[k], int32(j))
		}
		for _, i := range touched {
			if count[i] >= 3 && !isFired[[2]int32{i, int32(j)}] {
				s.semantic++
			}
			count[i] = 0
		}
	}
}

// sweepAll decides every pair of one aspect.
func sweepAll(aspect []Input, fired func(i, j int)) {
	st := make([]*Statement, len(aspect))
	for i, in := range aspect {
		st[i] = Analyze(in)
	}
	for i := range st {
		for j := i + 1; j < len(st); j++ {
			if DecideAnalyzed(st[i], st[j]).Confidence > 0 {
				fired(i, j)
			}
		}
	}
}

// TestBlockedSweepFindsEveryPair: on synthetic memories in the shape of the
// daemon's bench, with and without corpus statements mixed in, the
// candidate pairs hold every pair that fires, and the semantic pairs are
// those SharedContentTokens counts.
func TestBlockedSweepFindsEveryPair(t *testing.T) {
	t.Parallel()
	corpus := corpusInputs(t)
	for _, mix := range []float64{0, 0.1} {
		spec := zipfSpec{attributes: 20000, maxSiblings: 700, planted: 0.05, mixShare: mix, seed: 7}
		if testing.Short() || raceDetector { // -race: ten times slower; `make test` runs it whole without
			spec.attributes, spec.maxSiblings = 4000, 300
		}
		var s sweepStats
		for _, aspect := range zipfAspects(spec, corpus) {
			all := map[[2]int]bool{}
			sweepAll(aspect, func(i, j int) { all[[2]int{i, j}] = true })
			found := map[[2]int]bool{}
			var as sweepStats
			sweepBlocked(aspect, &as, func(i, j int) { found[[2]int{i, j}] = true })
			for p := range all {
				if !found[p] {
					t.Errorf("mix %.2f: %q → %q fires but was not a candidate", mix, aspect[p[0]].Content, aspect[p[1]].Content)
				}
			}
			if len(found) != len(all) {
				t.Errorf("mix %.2f: %d pairs fire, blocking found %d", mix, len(all), len(found))
			}
			st := make([]*Statement, len(aspect))
			for i, in := range aspect {
				st[i] = Analyze(in)
			}
			semantic := 0
			for i := range st {
				for j := i + 1; j < len(st); j++ {
					if !all[[2]int{i, j}] && SharedContentTokens(st[i], st[j]) >= 3 {
						semantic++
					}
				}
			}
			if as.semantic != semantic {
				t.Errorf("mix %.2f: %d semantic pairs through content keys, %d through SharedContentTokens", mix, as.semantic, semantic)
			}
			s.attributes += as.attributes
			s.pairs += as.pairs
			s.candidates += as.candidates
			s.fired += as.fired
			s.semantic += as.semantic
			s.semanticLists += as.semanticLists
		}
		t.Logf("mix %.2f: %v", mix, s)
	}
}

// BenchmarkBlockedSweep: one op sweeps 200,000 synthetic attributes in the
// shape of the daemon's bench (Zipf aspect sizes up to 3,000, 5% planted
// contradictions) on one goroutine: analysis, keys, index, the decisions
// of the candidate pairs, and the search for semantic pairs.
func BenchmarkBlockedSweep(b *testing.B) {
	for _, mix := range []float64{0, 0.05} {
		b.Run(fmt.Sprintf("mix=%.2f", mix), func(b *testing.B) {
			aspects := zipfAspects(zipfSpec{attributes: 200000, maxSiblings: 3000, planted: 0.05, mixShare: mix, seed: 1}, corpusInputs(b))
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuNanos()
			var s sweepStats
			for i := 0; i < b.N; i++ {
				s = sweepStats{}
				for _, a := range aspects {
					sweepBlocked(a, &s, nil)
				}
			}
			b.StopTimer()
			reportRates(b, cpu0)
			b.ReportMetric(float64(s.pairs), "pairs")
			b.ReportMetric(float64(s.candidates), "candidates")
			b.ReportMetric(float64(s.semantic), "semantic-pairs")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.attributes), "ns/attribute")
		})
	}
}
