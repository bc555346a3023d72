package matcher

// table is an open-addressing hash table with linear probing that maps the
// hash of a string to record indexes. A slot holds the upper 32 bits of the
// hash as a tag and the index plus one; the caller compares the string itself
// for every slot whose tag matches. It is built once with a known number of
// entries and never grows.
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
