package heuristics

// table is a read-only open-addressing hash table from byte strings to small
// integers, keyed by the FNV-1a hash the tokenizer computes anyway. It
// replaces map[string]T on the hot path: a lookup is one multiply, one or two
// probes and a byte comparison, with no hashing of its own.
type table struct {
	slots []tslot
	keys  []byte
	mask  uint32
}

type tslot struct {
	hash uint32
	off  uint32
	n    uint16
	val  uint16 // value+1; 0 marks an empty slot
}

func newTable(keys []string, vals []uint16) *table {
	size := uint32(16)
	for size < uint32(len(keys))*3 {
		size <<= 1
	}
	t := &table{slots: make([]tslot, size), mask: size - 1}
	for i, k := range keys {
		h := fnvString(k)
		j := t.index(h)
		for t.slots[j].val != 0 {
			j = (j + 1) & t.mask
		}
		t.slots[j] = tslot{hash: h, off: uint32(len(t.keys)), n: uint16(len(k)), val: vals[i] + 1}
		t.keys = append(t.keys, k...)
	}
	return t
}

func (t *table) index(h uint32) uint32 { return (h * 0x9E3779B1) >> 7 & t.mask }

// get returns the value stored for key, whose FNV-1a hash is h.
func (t *table) get(h uint32, key []byte) (uint16, bool) {
	j := t.index(h)
	for {
		s := &t.slots[j]
		if s.val == 0 {
			return 0, false
		}
		if s.hash == h && int(s.n) == len(key) && string(t.keys[s.off:s.off+uint32(s.n)]) == string(key) {
			return s.val - 1, true
		}
		j = (j + 1) & t.mask
	}
}

func fnvString(s string) uint32 { return fnv([]byte(s)) }
