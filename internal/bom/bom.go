package bom

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrUnsupported is what every *EncodingError is (errors.Is).
var ErrUnsupported = errors.New("unsupported text encoding")

// EncodingError reports a file in an encoding reconcile does not read.
type EncodingError struct {
	// Encoding is "UTF-16" or "UTF-32".
	Encoding string
	// ByteOrder is "little-endian" or "big-endian".
	ByteOrder string
}

func (e *EncodingError) Error() string {
	return e.Encoding + " is not supported: save the file as UTF-8"
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *EncodingError) Is(target error) bool { return target == ErrUnsupported }

var utf8Mark = []byte("\xef\xbb\xbf")

// Head is how many bytes Detect needs to tell an encoding.
const Head = 4

// Detect tells the encoding of a file from its first bytes (Head of them,
// or all of a shorter file): the length of a UTF-8 mark to drop (0 or 3),
// or an *EncodingError for UTF-32 and UTF-16, by their marks or, for
// UTF-16 without one, by text whose every other byte is zero.
func Detect(head []byte) (markLen int, err error) {
	switch {
	case bytes.HasPrefix(head, utf8Mark):
		return len(utf8Mark), nil
	case bytes.HasPrefix(head, []byte{0xff, 0xfe, 0, 0}):
		return 0, &EncodingError{Encoding: "UTF-32", ByteOrder: "little-endian"}
	case bytes.HasPrefix(head, []byte{0, 0, 0xfe, 0xff}):
		return 0, &EncodingError{Encoding: "UTF-32", ByteOrder: "big-endian"}
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}):
		return 0, &EncodingError{Encoding: "UTF-16", ByteOrder: "little-endian"}
	case bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		return 0, &EncodingError{Encoding: "UTF-16", ByteOrder: "big-endian"}
	case len(head) >= 4 && text(head[0]) && head[1] == 0 && text(head[2]) && head[3] == 0:
		return 0, &EncodingError{Encoding: "UTF-16", ByteOrder: "little-endian"}
	case len(head) >= 4 && head[0] == 0 && text(head[1]) && head[2] == 0 && text(head[3]):
		return 0, &EncodingError{Encoding: "UTF-16", ByteOrder: "big-endian"}
	}
	return 0, nil
}

// text reports a printable ASCII byte, a tab or a line break: what the
// first characters of a CSV or JSON file are.
func text(c byte) bool { return c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' || c == '\r' }

// Strip returns r without a leading UTF-8 mark, or an *EncodingError when r
// is in UTF-16 or UTF-32. An error reading the first bytes is returned by
// the first Read of the reader Strip returns.
func Strip(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(Head)
	n, err := Detect(head)
	if err != nil {
		return nil, err
	}
	_, _ = br.Discard(n)
	return br, nil
}
