package matcher

import (
	"fmt"
	"hash/maphash"
)

// Building a table inserts entries at random places in a table far larger
// than the caches: done in input order, nearly every insert is a cache (and
// TLB) miss. The builder instead takes the entries a chunk at a time and
// partitions each chunk by the part of the table its hash starts in, so
// that the inserts of a chunk sweep the table one cache-sized part after
// the other.

const (
	// buildChunk is how many entries are partitioned at a time.
	buildChunk = 1 << 15
	// buildBits: the table is seen as 1<<buildBits parts.
	buildBits = 6
)

// entry is an entry on its way into a table: its hash, the string it is
// for (refTable) and the record index it maps to.
type entry struct {
	h   uint64
	ref sref
	idx int32
}

// builder partitions entries for insertion; insert receives each chunk in
// part order.
type builder struct {
	src, dst []entry
	start    [1 << buildBits]int
	insert   func([]entry)
}

func newBuilder(insert func([]entry)) *builder {
	return &builder{src: make([]entry, 0, buildChunk), dst: make([]entry, buildChunk), insert: insert}
}

// part returns the part of a table a hash starts in: the same for every
// table size, since a table starts probing at uint32(h)*len>>32.
func part(h uint64) uint32 { return uint32(h) >> (32 - buildBits) }

func (b *builder) add(e entry) {
	b.src = append(b.src, e)
	if len(b.src) == buildChunk {
		b.flush()
	}
}

func (b *builder) flush() {
	if len(b.src) == 0 {
		return
	}
	clear(b.start[:])
	for _, e := range b.src {
		b.start[part(e.h)]++
	}
	sum := 0
	for k, c := range b.start {
		b.start[k] = sum
		sum += c
	}
	for _, e := range b.src {
		k := part(e.h)
		b.dst[b.start[k]] = e
		b.start[k]++
	}
	b.insert(b.dst[:len(b.src)])
	b.src = b.src[:0]
}

// indexKeys enters the intents added since the last call in byKey. The
// table is sized once for all intents when they all come before the first
// reference (the usual order) and rebuilt larger when later intents would
// load it past 2/3. The first key found twice is remembered.
func (m *Matcher) indexKeys() {
	n := m.intents.len()
	if m.nKeyed == n {
		return
	}
	from := m.nKeyed
	if n*3 > len(m.byKey.slots)*2 {
		m.byKey, from = newTable(max(n, 2*m.nKeyed)), 0
	}
	if n-from < buildChunk/4 {
		// A few intents added since the last reference: insert directly.
		for i := from; i < n; i++ {
			m.insertKey(entry{h: maphash.Bytes(m.seed, m.key(m.intents.ptr(int32(i)))), idx: int32(i)})
		}
		m.nKeyed = n
		return
	}
	b := newBuilder(func(es []entry) {
		for _, e := range es {
			m.insertKey(e)
		}
	})
	for i := from; i < n; i++ {
		b.add(entry{h: maphash.Bytes(m.seed, m.key(m.intents.ptr(int32(i)))), idx: int32(i)})
	}
	b.flush()
	m.nKeyed = n
}

func (m *Matcher) insertKey(e entry) {
	if !m.byKey.insertUnique(e.h, e.idx, func(k int32) bool { return m.sameKey(k, e.idx) }) && m.dupKey == "" {
		m.dupKey = string(m.key(m.intents.ptr(e.idx)))
	}
}

// sameKey reports whether intents i and j have the same key.
func (m *Matcher) sameKey(i, j int32) bool {
	return string(m.key(m.intents.ptr(i))) == string(m.key(m.intents.ptr(j)))
}

// lookupKey returns the intent keyed key (of hash h), or noIdx.
func (m *Matcher) lookupKey(key string, h uint64) int32 {
	found := noIdx
	m.byKey.each(h, func(j int32) bool {
		if string(m.key(m.intents.ptr(j))) == key {
			found = j
			return false
		}
		return true
	})
	if found == noIdx && m.late != nil {
		if j, ok := m.late.byKey[key]; ok {
			found = j
		}
	}
	return found
}

// index builds the reference tables once every intent is known.
func (m *Matcher) index() error {
	m.flushRefs()
	m.indexed = true
	m.indexKeys()
	if m.dupKey != "" {
		return fmt.Errorf("matcher: intent %q given twice", m.dupKey)
	}
	np := m.prefs.len()
	m.byPref = newRefTable(np)
	b := newBuilder(func(es []entry) {
		for _, e := range es {
			m.byPref.insert(e.h, e.ref, e.idx)
		}
	})
	for i := range np {
		p := m.prefs.at(int32(i))
		b.add(entry{h: maphash.Bytes(m.seed, m.ar.bytes(p.ref)), ref: p.ref, idx: p.intent})
	}
	b.flush()
	m.prefs = chunked[prefRec]{}
	n := m.intents.len()
	m.byRef = newTable(n)
	b.insert = func(es []entry) {
		for _, e := range es {
			m.byRef.insert(e.h, e.idx)
		}
	}
	for i := range n {
		if ref := m.ref(m.intents.ptr(int32(i))); len(ref) > 0 {
			b.add(entry{h: maphash.Bytes(m.seed, ref), idx: int32(i)})
		}
	}
	b.flush()
	return nil
}
