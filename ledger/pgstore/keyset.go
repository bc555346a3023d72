package pgstore

import (
	"encoding/binary"
	"hash/maphash"
)

// keySet is a set of strings kept compact and free of pointers, so that a
// large one costs the garbage collector nothing to scan: the keys are
// appended to one byte arena (a length, then the bytes) and found through
// an open-addressing table of arena offsets. An import holds the keys of
// its file in one, about 12 bytes plus the key's length per key.
type keySet struct {
	seed  maphash.Seed
	arena []byte
	// slots holds arena offset+1 of a key, 0 for an empty slot; its length
	// is a power of two, at most half full.
	slots []uint32
	n     int
}

func newKeySet() *keySet {
	return &keySet{seed: maphash.MakeSeed(), slots: make([]uint32, 1024)}
}

// Len is the number of keys in the set.
func (s *keySet) Len() int { return s.n }

// Add adds key and reports whether it was not in the set before.
func (s *keySet) Add(key string) bool {
	mask := uint64(len(s.slots) - 1)
	for i := maphash.String(s.seed, key) & mask; ; i = (i + 1) & mask {
		off := s.slots[i]
		if off == 0 {
			s.slots[i] = s.append(key)
			if s.n++; s.n*2 > len(s.slots) {
				s.grow()
			}
			return true
		}
		if string(s.at(off)) == key {
			return false
		}
	}
}

// Has reports whether key is in the set.
func (s *keySet) Has(key string) bool {
	mask := uint64(len(s.slots) - 1)
	for i := maphash.String(s.seed, key) & mask; ; i = (i + 1) & mask {
		off := s.slots[i]
		if off == 0 {
			return false
		}
		if string(s.at(off)) == key {
			return true
		}
	}
}

// append stores key in the arena and returns its slot value.
func (s *keySet) append(key string) uint32 {
	off := len(s.arena)
	if off+binary.MaxVarintLen64+len(key) >= 1<<32-1 {
		panic("pgstore: key set arena past 4 GiB")
	}
	s.arena = binary.AppendUvarint(s.arena, uint64(len(key)))
	s.arena = append(s.arena, key...)
	return uint32(off) + 1
}

// at is the key stored at slot value off.
func (s *keySet) at(off uint32) []byte {
	n, w := binary.Uvarint(s.arena[off-1:])
	start := int(off-1) + w
	return s.arena[start : start+int(n)]
}

func (s *keySet) grow() {
	old := s.slots
	s.slots = make([]uint32, 2*len(old))
	mask := uint64(len(s.slots) - 1)
	for _, off := range old {
		if off == 0 {
			continue
		}
		i := maphash.Bytes(s.seed, s.at(off)) & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = off
	}
}
