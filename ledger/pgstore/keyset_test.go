package pgstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestKeySet: the set agrees with a map over keys of every length up to the
// longest key, through several growths, empty key included.
func TestKeySet(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	s, want := newKeySet(), map[string]bool{}
	for i := range 50000 {
		var k string
		switch i % 4 {
		case 0:
			k = fmt.Sprintf("charge:order-%d", r.IntN(30000))
		case 1:
			b := make([]byte, r.IntN(256))
			for j := range b {
				b[j] = byte(r.IntN(256))
			}
			k = string(b)
		default:
			k = fmt.Sprint(r.IntN(20000))
		}
		if got := s.Add(k); got == want[k] {
			t.Fatalf("Add(%q) = %v with the key %s in the set", k, got, map[bool]string{true: "already", false: "not"}[want[k]])
		}
		want[k] = true
		if probe := fmt.Sprint(r.IntN(40000)); s.Has(probe) != want[probe] {
			t.Fatalf("Has(%q) = %v", probe, !want[probe])
		}
	}
	if s.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(want))
	}
	for k := range want {
		if !s.Has(k) || s.Add(k) {
			t.Fatalf("%q lost", k)
		}
	}
}
