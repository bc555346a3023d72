package report

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
)

// CountingFile counts the bytes read from a file (N, safe to read while
// another goroutine reads the file), for progress.
type CountingFile struct {
	*os.File
	N atomic.Int64
}

// Read reads from the file and counts what it read.
func (c *CountingFile) Read(p []byte) (int, error) {
	n, err := c.File.Read(p)
	c.N.Add(int64(n))
	return n, err
}

// CountingReader counts the bytes read through it since the last seek (N),
// for progress; it seeks through Seeker when one is given.
type CountingReader struct {
	R      io.Reader
	Seeker io.Seeker
	N      int64
}

// Seek seeks through Seeker and counts from there.
func (c *CountingReader) Seek(offset int64, whence int) (int64, error) {
	if c.Seeker == nil {
		return 0, errors.New("not seekable")
	}
	n, err := c.Seeker.Seek(offset, whence)
	c.N = n
	return n, err
}

// Read reads from R and counts what it read.
func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
