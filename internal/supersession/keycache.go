package supersession

import (
	"container/list"
	"hash/maphash"
	"sync"

	"github.com/supersessiond/supersessiond/heuristics"
)

// keyCache remembers the blocking keys of attributes, by id and what the
// analysis reads (content, kind, creation time, aspect name), least
// recently used out.
// The inline hook loads whole aspects again and again (a classification in
// an aspect of thousands) while only the new attribute needs reading: with
// the keys of the others at hand, only the pairs that may contradict are
// analysed. A sweep, full or incremental, reads each attribute once and
// does not use it.
type keyCache struct {
	mu    sync.Mutex
	max   int
	seed  maphash.Seed
	items map[string]*list.Element
	order *list.List // front: most recently used
}

type cachedKeys struct {
	id              string
	sum             uint64
	anchors, probes []heuristics.Key
	failure         string
}

// keyCacheSize bounds the cache: about 150 bytes an entry.
const keyCacheSize = 100_000

func newKeyCache(n int) *keyCache {
	return &keyCache{max: n, seed: maphash.MakeSeed(), items: make(map[string]*list.Element, n), order: list.New()}
}

// sum identifies what the analysis of a reads.
func (c *keyCache) sum(a *Attribute) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(a.Content.String)
	h.WriteString(string(a.Kind))
	maphash.WriteComparable(&h, len(a.AspectName))
	h.WriteString(a.AspectName)
	maphash.WriteComparable(&h, a.CreatedAt.UnixNano())
	return h.Sum64()
}

// keys sets a's blocking keys from the cache, or computes and remembers
// them.
func (c *keyCache) keys(a *Attribute) {
	if a.keyed {
		return
	}
	sum := c.sum(a)
	c.mu.Lock()
	if e, ok := c.items[a.ID]; ok {
		k := e.Value.(*cachedKeys)
		if k.sum == sum {
			c.order.MoveToFront(e)
			a.anchors, a.probes, a.keyed, a.failure = k.anchors, k.probes, true, k.failure
			c.mu.Unlock()
			return
		}
	}
	c.mu.Unlock()
	anchors, probes := a.blockKeys()
	a.stmt = nil // as Analyze does: keep the keys; the few in a pair are read again
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[a.ID]; ok {
		c.order.Remove(e)
	}
	c.items[a.ID] = c.order.PushFront(&cachedKeys{id: a.ID, sum: sum, anchors: anchors, probes: probes, failure: a.failure})
	for c.order.Len() > c.max {
		old := c.order.Remove(c.order.Back()).(*cachedKeys)
		delete(c.items, old.id)
	}
}
