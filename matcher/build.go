package matcher

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
