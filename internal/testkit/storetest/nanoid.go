package storetest

import (
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
)

// nanoidAlphabet is nanoid's URL-safe alphabet, which Honcho's ids are drawn
// from (its CHECKs: 21 characters of [A-Za-z0-9_-]).
const nanoidAlphabet = "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict"

// Nanoids makes Honcho-shaped ids. Not safe for concurrent use.
type Nanoids struct{ r *mrand.Rand }

// NewNanoids returns a generator: seeded, the same ids every run (the
// bench); seed 0, random ones.
func NewNanoids(seed uint64) *Nanoids {
	if seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	return &Nanoids{r: mrand.New(mrand.NewPCG(seed, 0x6e616e6f))}
}

// Next is a new 21-character id.
func (n *Nanoids) Next() string {
	var b [21]byte
	for i := range b {
		b[i] = nanoidAlphabet[n.r.IntN(len(nanoidAlphabet))]
	}
	return string(b[:])
}
