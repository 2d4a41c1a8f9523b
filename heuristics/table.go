package heuristics

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// key is a word of at most maxKey bytes as the lexicon tables compare it:
// its bytes as two little-endian words, zero padded, and its length. Every
// word of the lexicon fits (a test checks it); a longer word is not in it.
type key struct {
	k0, k1 uint64
	n      int
}

const maxKey = 16

// keyOf returns the key of w, and false when w is too long to be one.
func keyOf(w []byte) (key, bool) {
	if len(w) > maxKey {
		return key{}, false
	}
	var b [maxKey]byte
	copy(b[:], w)
	return key{k0: binary.LittleEndian.Uint64(b[:8]), k1: binary.LittleEndian.Uint64(b[8:]), n: len(w)}, true
}

// prefix is the key of the first m bytes of k (m <= k.n).
func (k key) prefix(m int) key {
	if m < 8 {
		return key{k0: k.k0 & (1<<(8*uint(m)) - 1), n: m}
	}
	return key{k0: k.k0, k1: k.k1 & (1<<(8*uint(m-8)) - 1), n: m}
}

// tab is the hash the lexicon tables are indexed by: a multiply of each
// word, which the perfect hashes need no more of. (Tokens need fnv.)
func (k key) tab() uint64 { return k.k0*0x9e3779b97f4a7c15 ^ k.k1*0xc2b2ae3d27d4eb4f }

// fnv is fnv64 of the key's bytes, computed from the two words.
func (k key) fnv() uint64 {
	h := uint64(k.n) * fnvSeed
	tail := k.k0
	if k.n >= 8 {
		h = (h ^ k.k0) * fnvRound
		h ^= h >> 32
		tail = k.k1
		if k.n == 16 {
			h = (h ^ k.k1) * fnvRound
			h ^= h >> 32
			tail = 0
		}
	}
	h = (h ^ tail) * fnvFinal
	return h ^ h>>29
}

// phf is a perfect hash function over a fixed set of keys ("hash and
// displace"): a key's 64-bit hash picks a bucket, the bucket's seed
// displaces it to a slot, and the seeds are chosen when the table is built
// so that no two keys share a slot. A lookup is two loads and one compare,
// hit or miss.
type phf struct {
	seeds  []uint16
	bshift uint // 64 - log2(len(seeds))
	sshift uint // 64 - log2(number of slots)
}

const phfMul = 0x9e3779b97f4a7c15

func (p *phf) slot(h uint64) uint64 {
	return ((h ^ uint64(p.seeds[h>>p.bshift])) * phfMul) >> p.sshift
}

// newPHF builds a perfect hash of hashes (which must be distinct) into
// 1<<slotBits slots with 1<<bucketBits buckets. It returns the slot of
// every key. The search is deterministic: the same keys give the same
// table.
func newPHF(hashes []uint64, bucketBits, slotBits uint) (phf, []uint64, error) {
	p := phf{seeds: make([]uint16, 1<<bucketBits), bshift: 64 - bucketBits, sshift: 64 - slotBits}
	buckets := make([][]int, len(p.seeds))
	for i, h := range hashes {
		b := h >> p.bshift
		buckets[b] = append(buckets[b], i)
	}
	order := make([]int, len(buckets))
	for i := range order {
		order[i] = i
	}
	// Fullest buckets first, while the table is empty.
	slices.SortStableFunc(order, func(a, b int) int { return len(buckets[b]) - len(buckets[a]) })
	used := make([]bool, 1<<slotBits)
	at := make([]uint64, len(hashes))
	for _, b := range order {
		if len(buckets[b]) == 0 {
			break
		}
	seeds:
		for seed := 0; ; seed++ {
			if seed > 0xffff {
				return phf{}, nil, fmt.Errorf("no seed places bucket %d (%d keys) in %d slots", b, len(buckets[b]), len(used))
			}
			p.seeds[b] = uint16(seed)
			for k, i := range buckets[b] {
				s := p.slot(hashes[i])
				if used[s] {
					continue seeds
				}
				for _, j := range buckets[b][:k] {
					if at[j] == s {
						continue seeds
					}
				}
				at[i] = s
			}
			for _, i := range buckets[b] {
				used[at[i]] = true
			}
			break
		}
	}
	return p, at, nil
}

// How a lexicon word's stem is derived (lexSlot.how), as endWord would
// derive it: precomputed so that a known word is never stemmed or hashed.
const (
	stemRaw    uint8 = iota // a function word: the word itself
	stemCanon               // the lexicon's canonical stem ("lives" → "live")
	stemPrefix              // the first cut bytes ("weekends" → "weekend")
	stemY                   // the first cut bytes and a y ("studies" → "study")
)

// lexSlot is one word of the lexicon's run-time table: the key it is found
// by and everything the tokenizer sets on its token. 32 bytes, two to a
// cache line.
type lexSlot struct {
	k0, k1 uint64
	flags  uint32
	hash   uint32 // fnv of the stem, as how derives it
	ant    uint16 // as entry.ant
	stem0  uint16 // stemCanon: the stem is lexicon.stems[stem0 : stem0+cut]
	n      uint8  // length of the word; 0 marks an empty slot
	kind   uint8  // how the stem is derived (stemRaw...), plus the word's name (wordTo...) << 2
	cut    uint8
	root   uint8 // as token.root
}

// token.root: where lookupPred starts.
const (
	rootUnknown uint8 = iota // not known: look the stem up
	rootNone                 // no predicate key starts with the stem
	rootIndex                // rootIndex+i: lexicon.rootNodes[i]
)

// Words the analysis recognises by name (token.word). A word is only named
// when its token was found as such in the lexicon, so token.word == wordTo
// exactly when the token's text is "to".
const (
	wordNone uint8 = iota
	wordTo
	wordFrom
	wordAs
	wordNo
	wordUp
	wordInto
	wordWith
	wordFor
	wordGoing
	wordGive // gave, give, gives, giving, given
)

var namedWords = map[string]uint8{
	"to": wordTo, "from": wordFrom, "as": wordAs, "no": wordNo, "up": wordUp, "into": wordInto,
	"with": wordWith, "for": wordFor, "going": wordGoing,
	"gave": wordGive, "give": wordGive, "gives": wordGive, "giving": wordGive, "given": wordGive,
}

// wordTable is the lexicon's run-time word table: a perfect hash of fixed
// size, so that a lookup shifts by constants and is not bounds-checked.
type wordTable struct {
	seeds [1 << wordBucketBits]uint16
	slots [1 << wordSlotBits]lexSlot
}

// Sizes of wordTable: a bucket for about two words, a table at most half
// full (newWordTable fails when the lexicon outgrows them).
const (
	wordBucketBits = 10
	wordSlotBits   = 12
)

// find returns the slot of the word whose key is k and whose tab hash is
// h, or nil.
func (t *wordTable) find(k key, h uint64) *lexSlot {
	s := &t.slots[((h^uint64(t.seeds[h>>(64-wordBucketBits)]))*phfMul)>>(64-wordSlotBits)]
	if s.k0 == k.k0 && s.k1 == k.k1 && int(s.n) == k.n {
		return s
	}
	return nil
}

// rootTable maps a verb stem to the root of its predicate keys in the trie.
type rootTable struct {
	phf
	slots []rootSlot
}

type rootSlot struct {
	k0, k1 uint64
	n      uint8
	node   uint16
}

func (t *rootTable) find(k key, h uint64) (uint16, bool) {
	s := &t.slots[t.slot(h)]
	if s.k0 == k.k0 && s.k1 == k.k1 && int(s.n) == k.n {
		return s.node, true
	}
	return 0, false
}

// slotBitsFor is the table size for n keys: at most half full.
func slotBitsFor(n int) uint { return uint(bits.Len(uint(2*n - 1))) }

// bucketBitsFor is the number of buckets for n keys: about two keys each.
func bucketBitsFor(n int) uint { return uint(bits.Len(uint(n / 2))) }

// stemForm is how the stem of the lexicon word w, whose entry is e, is
// derived, and the stem.
func stemForm(w string, e entry) (uint8, string) {
	switch {
	case e.stem != "":
		return stemCanon, e.stem
	case e.flags&nonContent != 0 && e.ant == 0:
		return stemRaw, w
	}
	_, s1, y := stem([]byte(w))
	if y {
		return stemY, w[:s1] + "y"
	}
	return stemPrefix, w[:s1]
}

// newWordTable builds the run-time table of the lexicon's words; roots
// numbers the predicate trie's roots by stem.
func (lx *lexicon) newWordTable(roots map[string]uint8) error {
	words := make([]string, 0, len(lx.words))
	for w := range lx.words {
		words = append(words, w)
	}
	slices.Sort(words)
	hashes := make([]uint64, len(words))
	keys := make([]key, len(words))
	for i, w := range words {
		k, ok := keyOf([]byte(w))
		if !ok {
			return fmt.Errorf("lexicon word %q is longer than %d bytes", w, maxKey)
		}
		keys[i], hashes[i] = k, k.tab()
	}
	if slotBitsFor(len(words)) > wordSlotBits {
		return fmt.Errorf("%d words do not fit a table of %d slots", len(words), 1<<wordSlotBits)
	}
	p, at, err := newPHF(hashes, wordBucketBits, wordSlotBits)
	if err != nil {
		return err
	}
	lx.wordTab = new(wordTable)
	copy(lx.wordTab.seeds[:], p.seeds)
	for i, w := range words {
		e := lx.words[w]
		s := lexSlot{k0: keys[i].k0, k1: keys[i].k1, n: uint8(keys[i].n), flags: e.flags, ant: e.ant}
		// What endWord would do with this word: see its miss path.
		how, stem := stemForm(w, e)
		switch how {
		case stemCanon:
			s.cut, s.stem0 = uint8(len(e.stem)), uint16(len(lx.stems))
			lx.stems = append(lx.stems, e.stem...)
		case stemPrefix:
			s.cut = uint8(len(stem))
		case stemY:
			s.cut = uint8(len(stem) - 1)
		}
		s.kind = how | namedWords[w]<<2
		s.hash = fnv([]byte(stem))
		s.root = rootNone
		if r, ok := roots[stem]; ok {
			s.root = rootIndex + r
		}
		lx.wordTab.slots[at[i]] = s
	}
	// Room for the eight-byte loads of copyStem.
	lx.stems = append(lx.stems, make([]byte, maxKey)...)
	return nil
}

// newRootTable builds the table of predicate roots: stems to trie nodes.
func newRootTable(roots map[string]uint16) (rootTable, error) {
	stems := make([]string, 0, len(roots))
	for w := range roots {
		stems = append(stems, w)
	}
	slices.Sort(stems)
	hashes := make([]uint64, len(stems))
	keys := make([]key, len(stems))
	for i, w := range stems {
		k, ok := keyOf([]byte(w))
		if !ok {
			return rootTable{}, fmt.Errorf("predicate root %q is longer than %d bytes", w, maxKey)
		}
		keys[i], hashes[i] = k, k.tab()
	}
	p, at, err := newPHF(hashes, bucketBitsFor(len(stems)), slotBitsFor(len(stems)))
	if err != nil {
		return rootTable{}, err
	}
	t := rootTable{phf: p, slots: make([]rootSlot, 1<<(64-p.sshift))}
	for i, w := range stems {
		t.slots[at[i]] = rootSlot{k0: keys[i].k0, k1: keys[i].k1, n: uint8(keys[i].n), node: roots[w]}
	}
	return t, nil
}
