package matcher

const (
	recChunkBits = 16
	recChunkSize = 1 << recChunkBits
)

// chunked is an append-only slice stored in fixed-size chunks, so that growing
// it never copies what it holds and never needs twice the memory. The first
// chunk starts small and grows by doubling up to the chunk size, so that a
// small matching (a few records) does not reserve megabytes; a pointer to a
// record (ptr) is valid until the next push.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

// firstChunk is the first chunk's starting capacity.
const firstChunk = 64

func (c *chunked[T]) len() int { return c.n }

func (c *chunked[T]) push(v T) {
	switch {
	case c.n == 0:
		c.chunks = append(c.chunks, make([]T, 0, firstChunk))
	case c.n&(recChunkSize-1) == 0:
		c.chunks = append(c.chunks, make([]T, 0, recChunkSize))
	}
	last := len(c.chunks) - 1
	c.chunks[last] = append(c.chunks[last], v)
	c.n++
}

func (c *chunked[T]) at(i int32) T { return c.chunks[i>>recChunkBits][i&(recChunkSize-1)] }

func (c *chunked[T]) ptr(i int32) *T { return &c.chunks[i>>recChunkBits][i&(recChunkSize-1)] }
