package matcher

// table is an open-addressing hash table with linear probing that maps the
// hash of a string to record indexes. A slot holds the upper 32 bits of the
// hash as a tag and the index plus one; the caller compares the string itself
// for every slot whose tag matches. It is built once with a known number of
// entries, or grown by doubling.
type table struct {
	slots []uint64
}

func newTable(n int) table {
	size := n + n/2 + 8 // load factor at most 2/3
	return table{slots: make([]uint64, size)}
}

func (t *table) start(h uint64) int {
	return int((uint64(uint32(h)) * uint64(len(t.slots))) >> 32)
}

func (t *table) insert(h uint64, idx int32) {
	i := t.start(h)
	for t.slots[i] != 0 {
		i++
		if i == len(t.slots) {
			i = 0
		}
	}
	t.slots[i] = h&^(1<<32-1) | uint64(uint32(idx)+1)
}

// insertUnique inserts idx unless a slot with the same tag holds an equal
// record (same reports equality); it returns false in that case.
func (t *table) insertUnique(h uint64, idx int32, same func(int32) bool) bool {
	tag := h &^ (1<<32 - 1)
	i := t.start(h)
	for s := t.slots[i]; s != 0; s = t.slots[i] {
		if s&^(1<<32-1) == tag && same(int32(uint32(s)-1)) {
			return false
		}
		i++
		if i == len(t.slots) {
			i = 0
		}
	}
	t.slots[i] = tag | uint64(uint32(idx)+1)
	return true
}

// each calls fn with every index stored under a hash whose tag matches h,
// until fn returns false.
func (t *table) each(h uint64, fn func(idx int32) bool) {
	if len(t.slots) == 0 {
		return
	}
	tag := h &^ (1<<32 - 1)
	i := t.start(h)
	for {
		s := t.slots[i]
		if s == 0 {
			return
		}
		if s&^(1<<32-1) == tag {
			if !fn(int32(uint32(s) - 1)) {
				return
			}
		}
		i++
		if i == len(t.slots) {
			i = 0
		}
	}
}

// refSlot is a slot of a refTable: the string's place in the arena, the
// record it belongs to (plus one; zero marks an empty slot) and the upper
// half of its hash.
type refSlot struct {
	ref sref
	idx uint32
	tag uint32
}

// refTable is a table whose slots carry the string's arena reference, so a
// lookup reads the slot and the string and nothing else.
type refTable struct {
	slots []refSlot
}

func newRefTable(n int) refTable { return refTable{slots: make([]refSlot, n+n/2+8)} }

func (t *refTable) start(h uint64) int {
	return int((uint64(uint32(h)) * uint64(len(t.slots))) >> 32)
}

func (t *refTable) insert(h uint64, ref sref, idx int32) {
	i := t.start(h)
	for t.slots[i].idx != 0 {
		i++
		if i == len(t.slots) {
			i = 0
		}
	}
	t.slots[i] = refSlot{ref: ref, idx: uint32(idx) + 1, tag: uint32(h >> 32)}
}
