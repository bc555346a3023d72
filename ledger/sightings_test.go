package ledger

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sightingsToMeetByDefinition is SightingsToMeet as its comment defines
// it, with keys built per sighting.
func sightingsToMeetByDefinition(batch []Sighting, created map[string]bool) []int {
	n := make(map[string]int, len(batch))
	for _, s := range batch {
		n[TxnKey(s.Txn.Provider, s.Txn.ID)]++
	}
	var out []int
	for i, s := range batch {
		if k := TxnKey(s.Txn.Provider, s.Txn.ID); !created[k] || n[k] > 1 {
			out = append(out, i)
		}
	}
	return out
}

// TestSightingsToMeetRandom holds SightingsToMeet to its definition on
// random batches: of one provider and of several, with repeated ids, ids
// that one provider repeats and another not, and created sets that name
// some, all or none of them. Providers and ids are valid ones: ValidateTxn
// refuses a NUL, so no two transactions share a TxnKey.
func TestSightingsToMeetRandom(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 3000 {
		providers := []string{"mpesa", "stripe", "mpesax", ""}[:1+rng.IntN(4)]
		size := rng.IntN(40)
		ids := 1 + rng.IntN(60)
		batch := make([]Sighting, size)
		for i := range batch {
			batch[i].Txn = ProviderTxn{Provider: providers[rng.IntN(len(providers))], ID: fmt.Sprint("T", rng.IntN(ids))}
			if rng.IntN(10) == 0 {
				batch[i].Txn.ID = "xT1" // mpesa's xT1 is not mpesax's T1
			}
		}
		created := map[string]bool{}
		for _, s := range batch {
			if rng.IntN(4) > 0 || round%7 == 0 {
				created[TxnKey(s.Txn.Provider, s.Txn.ID)] = true
			}
		}
		if rng.IntN(5) == 0 {
			created[TxnKey("mpesa", "T1")] = true // one the batch does not hold
		}
		if rng.IntN(10) == 0 {
			created = map[string]bool{} // a re-import
		}
		if got, want := SightingsToMeet(batch, created), sightingsToMeetByDefinition(batch, created); !slices.Equal(got, want) ||
			(got == nil) != (want == nil) {
			t.Fatalf("batch %v created %v: got %v, want %v", batch, created, got, want)
		}
	}
}
