package csvfile

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestReuseRecords: with ReuseRecords, each record read is the one read
// without it (fields, line, raw bytes, errors) until the next call.
func TestReuseRecords(t *testing.T) {
	t.Parallel()
	in := "id,amount\n\"a\",1\n\nb,2,extra\nc,\"3\n4\"\nd,\"bad\"x\ne,5\n"
	read := func(reuse bool) []string {
		r, err := NewReader(strings.NewReader(in), "f.csv", ',')
		if err != nil {
			t.Fatal(err)
		}
		if reuse {
			r.ReuseRecords()
		}
		var out []string
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				return out
			}
			out = append(out, fmt.Sprintf("%d %q %q %v", rec.Line, rec.Fields, rec.Raw, err))
		}
	}
	if got, want := read(true), read(false); !slices.Equal(got, want) || len(want) < 4 {
		t.Fatalf("with ReuseRecords:\n%q\nwithout:\n%q", got, want)
	}
}
