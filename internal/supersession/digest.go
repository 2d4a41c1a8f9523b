package supersession

import (
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"sync"

	"github.com/supersessiond/supersessiond/heuristics"
)

// An aspect's key digest is its blocking index kept in the database, so
// that an incremental pass can find the siblings a changed attribute's keys
// meet without reading the whole aspect (SPEC §11). For each key, as an
// anchor and as a probe, it lists the attributes that have it, or says
// "many" when more than digestCap do: a change that meets a key held that
// widely is decided against its whole aspect, as before. Keys are folded to
// 32 bits: two keys that fold together only add candidates, and every
// candidate is still decided.
//
// Encoding (little-endian; all offsets relative to their section):
//
//	version byte
//	anchors section, probes section:
//	  uvarint n | n × uint32 key, ascending | n × uint32 end of posting | postings
//	  a posting is uvarint (attribute ref + 1)..., or one 0 byte for "many"
//	ids section: uvarint n | n × uint32 end of id | id bytes
//
// A reader finds a key by binary search over the fixed-size keys: nothing is
// decoded but what a lookup touches.

// digestVersion is the encoding's version byte; a fragment of another
// version is not read (its aspect is read whole, which replaces it).
const digestVersion byte = 1

// digestCap is the most attributes a key lists before it says "many". On
// the bench's graph a changed attribute meets a key held more widely than
// four times in 0.5% of changes, and the digest costs about 27 bytes an
// attribute (64: 0.1%, 53 bytes).
const digestCap = 4

// digestMinAttributes is the smallest aspect given a digest: a smaller one
// costs less to read whole than to look up.
const digestMinAttributes = 32

var (
	errDigest        = errors.New("supersession: malformed key digest")
	errDigestVersion = errors.New("supersession: key digest of another encoding")
)

func fold(k heuristics.Key) uint32 { return uint32(k) ^ uint32(k>>32) }

// digestBuilder collects postings for one fragment.
type digestBuilder struct {
	ids     []string
	refs    []int32 // attribute index → ref + 1 (0: none yet)
	out     []byte
	entries []digestEntry
	order   []uint64 // key << 32 | entry, sorted
	refBuf  []uint32
}

// digestEntry is one key's entry while a fragment is built: its refs are
// refBuf[start:start+n]; n < 0 says "many".
type digestEntry struct {
	key      uint32
	start, n int32
}

// builders recycles the scratch space of encodeDigest: a full pass encodes
// a digest for every large aspect, and fresh buffers each time were most of
// what the digests added to the pass's garbage.
var builders = sync.Pool{New: func() any { return new(digestBuilder) }}

// encodeDigest encodes the keys of attrs from their anchor and probe
// indexes.
func encodeDigest(attrs []*Attribute, anchorIx, probeIx *keyIndex) []byte {
	b := builders.Get().(*digestBuilder)
	defer builders.Put(b)
	b.ids = b.ids[:0]
	b.refs = slices.Grow(b.refs[:0], len(attrs))[:len(attrs)]
	clear(b.refs)
	b.out = append(b.out[:0], digestVersion)
	b.section(attrs, anchorIx)
	b.section(attrs, probeIx)
	b.out = binary.AppendUvarint(b.out, uint64(len(b.ids)))
	end := uint32(0)
	for _, id := range b.ids {
		end += uint32(len(id))
		b.out = binary.LittleEndian.AppendUint32(b.out, end)
	}
	for _, id := range b.ids {
		b.out = append(b.out, id...)
	}
	clear(b.ids) // the strings belong to the attributes
	return slices.Clone(b.out)
}

func (b *digestBuilder) ref(attrs []*Attribute, i int32) uint32 {
	if b.refs[i] == 0 {
		b.ids = append(b.ids, attrs[i].ID)
		b.refs[i] = int32(len(b.ids))
	}
	return uint32(b.refs[i] - 1)
}

func (b *digestBuilder) section(attrs []*Attribute, ix *keyIndex) {
	b.entries, b.refBuf = b.entries[:0], b.refBuf[:0]
	for _, h := range ix.used {
		slot := &ix.slots[h]
		e := digestEntry{key: fold(slot.key), start: int32(len(b.refBuf))}
		for x := slot.head - 1; x >= 0 && e.n >= 0; x = ix.next[x] {
			if e.n++; e.n > digestCap {
				e.n = -1
			}
		}
		for x := slot.head - 1; x >= 0 && e.n > 0; x = ix.next[x] {
			b.refBuf = append(b.refBuf, b.ref(attrs, ix.at[x]))
		}
		b.entries = append(b.entries, e)
	}
	// Sorted by key as plain integers: a comparison function cost more than
	// the rest of the encoding.
	b.order = b.order[:0]
	for i, e := range b.entries {
		b.order = append(b.order, uint64(e.key)<<32|uint64(i))
	}
	slices.Sort(b.order)
	b.out = binary.AppendUvarint(b.out, uint64(len(b.entries)))
	for _, o := range b.order {
		b.out = binary.LittleEndian.AppendUint32(b.out, uint32(o>>32))
	}
	ends := len(b.out)
	b.out = append(b.out, make([]byte, 4*len(b.entries))...)
	postings := len(b.out)
	for i, o := range b.order {
		e := b.entries[uint32(o)]
		if e.n < 0 {
			b.out = append(b.out, 0)
		}
		for _, r := range b.refBuf[e.start : e.start+max(e.n, 0)] {
			b.out = binary.AppendUvarint(b.out, uint64(r)+1)
		}
		binary.LittleEndian.PutUint32(b.out[ends+4*i:], uint32(len(b.out)-postings))
	}
}

// digestSection is one role's part of a decoded fragment.
type digestSection struct {
	n        int
	keys     []byte // n × uint32
	ends     []byte // n × uint32
	postings []byte
}

// digest is a fragment read for lookups: its sections point into the
// encoded bytes.
type digest struct {
	anchors, probes digestSection
	idEnds          []byte
	idBytes         []byte
	nIDs            int
}

// parseDigest checks a fragment's structure and returns it ready for
// lookups; any inconsistency is errDigest (the caller reads the aspect
// whole).
func parseDigest(buf []byte) (*digest, error) {
	if len(buf) == 0 {
		return nil, errDigest
	}
	if buf[0] != digestVersion {
		return nil, errDigestVersion
	}
	d := &digest{}
	rest := buf[1:]
	var err error
	if d.anchors, rest, err = parseSection(rest); err != nil {
		return nil, err
	}
	if d.probes, rest, err = parseSection(rest); err != nil {
		return nil, err
	}
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)) {
		return nil, errDigest
	}
	rest = rest[w:]
	if uint64(len(rest)) < 4*n {
		return nil, errDigest
	}
	d.nIDs, d.idEnds, d.idBytes = int(n), rest[:4*n], rest[4*n:]
	last := uint32(0)
	for i := range d.nIDs {
		e := binary.LittleEndian.Uint32(d.idEnds[4*i:])
		if e < last {
			return nil, errDigest
		}
		last = e
	}
	if int(last) != len(d.idBytes) {
		return nil, errDigest
	}
	return d, nil
}

func parseSection(buf []byte) (digestSection, []byte, error) {
	var s digestSection
	n, w := binary.Uvarint(buf)
	if w <= 0 || n > uint64(len(buf)) {
		return s, nil, errDigest
	}
	buf = buf[w:]
	if uint64(len(buf)) < 8*n {
		return s, nil, errDigest
	}
	s.n, s.keys, s.ends = int(n), buf[:4*n], buf[4*n:8*n]
	buf = buf[8*n:]
	last := uint32(0)
	for i := range s.n {
		e := binary.LittleEndian.Uint32(s.ends[4*i:])
		if e < last {
			return s, nil, errDigest
		}
		last = e
	}
	if int(last) > len(buf) {
		return s, nil, errDigest
	}
	s.postings = buf[:last]
	return s, buf[last:], nil
}

// lookup adds to ids the attributes listed under k; many reports a key
// listed as "many".
func (d *digest) lookup(s *digestSection, k heuristics.Key, ids map[string]bool) (many bool, err error) {
	key := fold(k)
	i := sort.Search(s.n, func(i int) bool { return binary.LittleEndian.Uint32(s.keys[4*i:]) >= key })
	for ; i < s.n && binary.LittleEndian.Uint32(s.keys[4*i:]) == key; i++ {
		start := uint32(0)
		if i > 0 {
			start = binary.LittleEndian.Uint32(s.ends[4*(i-1):])
		}
		p := s.postings[start:binary.LittleEndian.Uint32(s.ends[4*i:])]
		for len(p) > 0 {
			r, w := binary.Uvarint(p)
			if w <= 0 {
				return false, errDigest
			}
			p = p[w:]
			if r == 0 {
				many = true
				continue
			}
			id, err := d.id(int(r - 1))
			if err != nil {
				return false, err
			}
			ids[id] = true
		}
	}
	return many, nil
}

func (d *digest) id(r int) (string, error) {
	if r >= d.nIDs {
		return "", errDigest
	}
	start := uint32(0)
	if r > 0 {
		start = binary.LittleEndian.Uint32(d.idEnds[4*(r-1):])
	}
	return string(d.idBytes[start:binary.LittleEndian.Uint32(d.idEnds[4*r:])]), nil
}

// meet adds to ids the attributes whose keys may pair with a statement of
// these keys: its probes among the anchors, its anchors among the probes.
func (d *digest) meet(anchors, probes []heuristics.Key, ids map[string]bool) (many bool, err error) {
	for _, role := range []struct {
		s    *digestSection
		keys []heuristics.Key
	}{{&d.anchors, probes}, {&d.probes, anchors}} {
		for _, k := range role.keys {
			m, err := d.lookup(role.s, k, ids)
			if err != nil {
				return false, err
			}
			many = many || m
		}
	}
	return many, nil
}

// digestOf encodes the keys of the given attributes of g (indices into
// g.Attrs, each already keyed): the fragment an incremental pass adds for
// what it examined.
func digestOf(attrs []*Attribute, include []bool) []byte {
	anchors := make([][]heuristics.Key, len(attrs))
	probes := make([][]heuristics.Key, len(attrs))
	for i, a := range attrs {
		if include[i] {
			anchors[i], probes[i] = a.blockKeys()
		}
	}
	ai, pi := newKeyIndex(anchors, include), newKeyIndex(probes, include)
	defer ai.release()
	defer pi.release()
	return encodeDigest(attrs, ai, pi)
}
