package intentcsv

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestEncodeQuickPath: records whose fields need no quotes are joined by
// hand; every record encodes exactly as the CSV writer writes it.
func TestEncodeQuickPath(t *testing.T) {
	t.Parallel()
	byWriter := func(rec []string) []byte {
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		_ = w.Write(rec)
		w.Flush()
		return bytes.Clone(bytes.TrimRight(b.Bytes(), "\n"))
	}
	r := rand.New(rand.NewPCG(19, 20))
	pieces := []string{"a", "Z", "0", "-", ":", " ", "\t", ",", "\"", "\n", "\r", `\`, ".", "é", "\u00a0", "\u2003", "\xff", ";"}
	e := newEncoder()
	quick := 0
	for range 50000 {
		rec := make([]string, 1+r.IntN(5))
		for i := range rec {
			var b []byte
			for range r.IntN(5) {
				if r.IntN(3) == 0 {
					b = append(b, pieces[r.IntN(len(pieces))]...)
				} else {
					b = append(b, byte('a'+r.IntN(26)))
				}
			}
			rec[i] = string(b)
			if r.IntN(40) == 0 {
				rec[i] = `\.`
			}
		}
		if plainFields(rec) {
			quick++
		}
		if got, want := e.encode(rec), byWriter(rec); !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("encode(%q) = %q, the writer writes %q", rec, got, want)
		}
	}
	if quick < 5000 {
		t.Fatalf("only %d records took the quick path", quick)
	}
}

// TestColumnNames: the columns read by position are the known columns.
func TestColumnNames(t *testing.T) {
	t.Parallel()
	if known := append(slices.Clone(Required), Optional...); !slices.Equal(columnNames[:], known) {
		t.Fatalf("columnNames = %q, the known columns are %q", columnNames, known)
	}
}

// TestSplitRefs holds splitRefs to strings.Split on random lists.
func TestSplitRefs(t *testing.T) {
	t.Parallel()
	byDefinition := func(s string) []string {
		var refs []string
		for _, r := range strings.Split(s, ";") {
			if r = strings.TrimSpace(r); r != "" && !slices.Contains(refs, r) {
				refs = append(refs, r)
			}
		}
		return refs
	}
	r := rand.New(rand.NewPCG(27, 28))
	pieces := []string{";", " ", "a", "b", "SB1", ";;", "\t"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		if got, want := splitRefs(b.String()), byDefinition(b.String()); !slices.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("splitRefs(%q) = %q, want %q", b.String(), got, want)
		}
	}
}
