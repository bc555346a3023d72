package matcher

import (
	"encoding/binary"
	"fmt"
)

const (
	chunkBits = 22
	chunkSize = 1 << chunkBits
	lenBits   = 24
	maxStrLen = 1<<16 - 1
)

// sref locates a string in an arena: the global offset in the high 40 bits,
// the length in the low 24.
type sref uint64

func (r sref) len() int { return int(r & (1<<lenBits - 1)) }

// firstArena is the first chunk's starting capacity; it grows by doubling.
const firstArena = 4096

// arena holds copies of strings in large chunks that the garbage collector
// never scans (they hold no pointers) and that never move once written.
type arena struct {
	chunks [][]byte
}

func (a *arena) add(s string) (sref, error) {
	n := len(s)
	if n == 0 {
		return 0, nil
	}
	if n > maxStrLen {
		return 0, fmt.Errorf("value of %d bytes is longer than %d", n, maxStrLen)
	}
	last := a.room(n)
	c := a.chunks[last]
	off := uint64(last)<<chunkBits | uint64(len(c))
	a.chunks[last] = append(c, s...)
	return sref(off<<lenBits | uint64(n)), nil
}

func (a *arena) bytes(r sref) []byte {
	n := r.len()
	if n == 0 {
		return nil
	}
	off := uint64(r) >> lenBits
	c := a.chunks[off>>chunkBits]
	p := off & (chunkSize - 1)
	return c[p : p+uint64(n) : p+uint64(n)]
}

// room makes room for n more bytes in the last chunk, or starts a new one,
// and returns the chunk's index. The first chunk starts small and grows by
// doubling up to the chunk size: offsets stay valid (they are within the
// chunk), and what was read from the old array keeps it.
func (a *arena) room(n int) int {
	last := len(a.chunks) - 1
	switch {
	case last < 0:
		a.chunks = append(a.chunks, make([]byte, 0, max(firstArena, n)))
		last++
	case len(a.chunks[last])+n > chunkSize:
		a.chunks = append(a.chunks, make([]byte, 0, chunkSize))
		last++
	case len(a.chunks[last])+n > cap(a.chunks[last]):
		c := make([]byte, len(a.chunks[last]), min(chunkSize, max(2*cap(a.chunks[last]), len(a.chunks[last])+n)))
		copy(c, a.chunks[last])
		a.chunks[last] = c
	}
	return last
}

// str returns a new string with the bytes of r.
func (a *arena) str(r sref) string { return string(a.bytes(r)) }

// eq reports whether r holds s, without allocating.
func (a *arena) eq(r sref, s string) bool {
	return r.len() == len(s) && string(a.bytes(r)) == s
}

// addBlock stores parts as one block, each part preceded by its length as
// a uvarint, so that a record needs one sref for several strings.
func (a *arena) addBlock(parts ...string) (sref, error) {
	n := len(parts)
	for _, p := range parts {
		if len(p) > maxStrLen {
			return 0, fmt.Errorf("value of %d bytes is longer than %d", len(p), maxStrLen)
		}
		n += len(p)
		if len(p) >= 0x80 {
			n += uvarintLen(len(p)) - 1
		}
	}
	last := a.room(n)
	c := a.chunks[last]
	off := uint64(last)<<chunkBits | uint64(len(c))
	for _, p := range parts {
		if len(p) < 0x80 {
			c = append(c, byte(len(p)))
		} else {
			c = binary.AppendUvarint(c, uint64(len(p)))
		}
		c = append(c, p...)
	}
	a.chunks[last] = c
	return sref(off<<lenBits | uint64(n)), nil
}

func uvarintLen(n int) int {
	w := 1
	for ; n >= 0x80; n >>= 7 {
		w++
	}
	return w
}

// field returns part k of the block r.
func (a *arena) field(r sref, k int) []byte {
	b := a.bytes(r)
	for {
		n, w := int(b[0]), 1
		if n >= 0x80 {
			u, uw := binary.Uvarint(b)
			n, w = int(u), uw
		}
		if k == 0 {
			return b[w : w+n : w+n]
		}
		b, k = b[w+n:], k-1
	}
}
