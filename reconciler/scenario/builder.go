package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
)

// builder holds a day under construction and the random source it draws from.
type builder struct {
	r    *rand.Rand
	d    *Day
	seq  int
	seen map[string]bool
}

func newBuilder(seed uint64, d *Day) *builder {
	return &builder{r: rand.New(rand.NewPCG(seed, 0x5eed)), d: d, seen: map[string]bool{}}
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// code returns a random upper-case code of n characters after prefix, never
// the same twice in one day.
func (b *builder) code(prefix string, n int, alphabet string) string {
	for {
		buf := []byte(prefix)
		for range n {
			buf = append(buf, alphabet[b.r.IntN(len(alphabet))])
		}
		if s := string(buf); !b.seen[s] {
			b.seen[s] = true
			return s
		}
	}
}

func (b *builder) key(prefix string) string {
	b.seq++
	return fmt.Sprintf("%s-%05d", prefix, b.seq)
}

func (b *builder) phone() string { return fmt.Sprintf("2547%08d", b.r.IntN(100000000)) }

// at returns a random time in [from, from+span).
func (b *builder) at(from time.Time, span time.Duration) time.Time {
	return from.Add(time.Duration(b.r.Int64N(int64(span/time.Second))) * time.Second).UTC()
}

func mustAmount(minor int64, cur string) money.Amount {
	a, err := money.FromMinor(minor, cur)
	if err != nil {
		panic(err)
	}
	return money.Amount{Value: decimal.New(minor, -mustExp(cur)), Currency: a.Currency}
}

func mustExp(cur string) int32 {
	e, err := money.Exponent(cur)
	if err != nil {
		panic(err)
	}
	return e
}

func (b *builder) intent(key, customer string, amount money.Amount, state ledger.State, created time.Time, attempts ...Attempt) *Intent {
	updated := created
	for _, a := range attempts {
		if a.At.After(updated) {
			updated = a.At
		}
	}
	if state == ledger.StateSucceeded || state == ledger.StateFailed || state == ledger.StateUnknown {
		updated = updated.Add(time.Duration(5+b.r.IntN(40)) * time.Second)
	}
	b.d.Intents = append(b.d.Intents, Intent{NewIntent: ledger.NewIntent{IntentParams: ledger.IntentParams{
		Key: key, Provider: b.d.Provider, Amount: amount, Customer: customer, Reference: ledger.DeriveReference(key)},
		State: state, CreatedAt: created, UpdatedAt: updated}, Attempts: attempts, Lease: 15 * time.Minute})
	return &b.d.Intents[len(b.d.Intents)-1]
}

func (b *builder) see(t ledger.ProviderTxn, channel, ref string, raw string, received time.Time) {
	t.Provider = b.d.Provider
	b.d.Sightings = append(b.d.Sightings, providers.Sighting{Txn: t,
		Source: ledger.Source{Channel: channel, Ref: ref, Raw: []byte(raw), ReceivedAt: received.UTC()}})
}

func (b *builder) expect(kind ledger.Kind, key string, ids ...string) {
	if ids == nil {
		ids = []string{}
	}
	b.d.Expected = append(b.d.Expected, Expected{Kind: kind, IntentKey: key, TxnIDs: ids})
}

func (b *builder) finish() *Day {
	sortExpected(b.d.Expected)
	return b.d
}

// hashedMSISDN is how newer C2B confirmations show the payer.
func hashedMSISDN(phone string) string {
	sum := sha256.Sum256([]byte(phone))
	return hex.EncodeToString(sum[:])
}

func sighting(provider string, t ledger.ProviderTxn, channel, ref, raw string, received time.Time) providers.Sighting {
	t.Provider = provider
	return providers.Sighting{Txn: t, Source: ledger.Source{Channel: channel, Ref: ref, Raw: []byte(raw), ReceivedAt: received.UTC()}}
}
