package ledgertest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Seed returns the seed of a randomized test: LEDGERTEST_SEED when set,
// else the clock. It logs it, so that a failure can be repeated.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("LEDGERTEST_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (LEDGERTEST_SEED)", seed)
	return seed
}

// GenProviders are the providers of the sightings a SightingGen makes.
var GenProviders = []string{"mpesa", "stripe"}

// SightingGen makes random sightings of a few transactions. Each
// transaction has a usual form that most sightings agree with; the others
// differ from it in the ways the rules of UpsertProviderTxns tell apart,
// at their edges: amounts at another scale or another value, another
// currency or type, times a day apart give or take a microsecond or less,
// pending and final statuses, empty and other text fields, settlements
// alike and not, sources repeated and not.
type SightingGen struct {
	R *rand.Rand
	// IDs is how many transactions the sightings are of.
	IDs int
}

// NewSightingGen returns a generator of sightings of ids transactions.
func NewSightingGen(seed, stream uint64, ids int) *SightingGen {
	return &SightingGen{R: rand.New(rand.NewPCG(seed, stream)), IDs: ids}
}

// pick returns vals[0] but for p percent of the time one of the others.
func (g *SightingGen) pick(p int, vals ...string) string {
	if g.R.IntN(100) >= p {
		return vals[0]
	}
	return vals[1+g.R.IntN(len(vals)-1)]
}

func (g *SightingGen) amount(value, currency string) money.Amount {
	a, err := money.Parse(value, currency)
	if err != nil {
		panic(err)
	}
	return a
}

// Sighting returns a sighting of one of the transactions.
func (g *SightingGen) Sighting() ledger.Sighting { return g.sightingOf(g.R.IntN(g.IDs)) }

// Again returns another sighting of the transaction of s, one of the
// generator's.
func (g *SightingGen) Again(s ledger.Sighting) ledger.Sighting {
	var n int
	if _, err := fmt.Sscanf(s.Txn.ID, "T%d", &n); err != nil {
		panic(fmt.Sprintf("%s is no id of a SightingGen", s.Txn.ID))
	}
	return g.sightingOf(n)
}

// sightingOf returns a sighting of transaction n.
func (g *SightingGen) sightingOf(n int) ledger.Sighting {
	provider, id := GenProviders[0], fmt.Sprintf("T%05d", n)
	if n%5 == 4 {
		provider = GenProviders[1]
	}
	amount := g.amount(g.pick(8, fmt.Sprint(10+n%7), "99", "10.5", "-3"), g.pick(4, "KES", "USD"))
	if g.R.IntN(20) == 0 {
		// The same number at another scale: 10 and 10.00 agree.
		c := amount.Value.Coefficient()
		amount.Value = decimal.NewFromBigInt(c.Mul(c, decimal.New(100, 0).BigInt()), amount.Value.Exponent()-2)
	}
	day := 24 * time.Hour
	occurred := T0.Add(time.Duration(n) * time.Minute)
	if g.R.IntN(3) == 0 {
		occurred = occurred.Add([]time.Duration{3 * time.Hour, day, -day, day + time.Microsecond, -day - time.Microsecond,
			day - time.Microsecond, day + 500*time.Nanosecond, -day - 500*time.Nanosecond, 1500 * time.Nanosecond,
			2 * day}[g.R.IntN(10)])
	}
	txn := ledger.ProviderTxn{Provider: provider, ID: id,
		Type:         ledger.TxnType(g.pick(5, string(ledger.TxnCharge), string(ledger.TxnRefund))),
		Status:       ledger.TxnStatus(g.pick(50, string(ledger.TxnSucceeded), string(ledger.TxnPending), string(ledger.TxnFailed))),
		Amount:       amount,
		OccurredAt:   occurred,
		Reference:    g.pick(40, "ref-"+id, "", "other"),
		ProviderRef:  g.pick(50, "", "pr-"+id, "pr-x"),
		Counterparty: g.pick(30, "2547****1234", "", "2547****9999"),
		LinkedID:     g.pick(20, "", "L"+id),
	}
	switch g.R.IntN(10) {
	case 0:
		txn.Settlement, txn.ExchangeRate = g.amount("1.00", "USD"), "0.0077"
	case 1:
		txn.Settlement, txn.ExchangeRate = g.amount(g.pick(50, "2.00", "2", "2.5"), g.pick(50, "USD", "EUR")), g.pick(50, "0.01", "")
	}
	src := ledger.Source{
		Channel:    g.pick(40, "statement", "api", "c2b_confirmation"),
		Ref:        fmt.Sprintf("r%d", g.R.IntN([]int{3, 3, 3, 40}[g.R.IntN(4)])),
		Raw:        []byte(g.pick(30, "raw "+id, "raw other", "")),
		ReceivedAt: T0.Add(time.Duration(g.R.IntN(1000))*time.Second + time.Duration(g.R.IntN(3))*700*time.Nanosecond),
	}
	if g.R.IntN(4) > 0 {
		// Most of a batch arrives at once, like a file's lines: the new
		// transactions share their time of receipt.
		src.ReceivedAt = T0
	}
	if len(src.Raw) == 0 {
		src.Raw = nil
	}
	return ledger.Sighting{Txn: txn, Source: src}
}

// Batch returns n sightings.
func (g *SightingGen) Batch(n int) []ledger.Sighting {
	batch := make([]ledger.Sighting, n)
	for i := range batch {
		batch[i] = g.Sighting()
	}
	return batch
}

// Next returns the next batch of an import, given sent, the batches so
// far: new sightings, mostly (up to one of sizes of them), or a batch sent
// again (a re-import), or sent again with some of its sightings changed.
func (g *SightingGen) Next(sent [][]ledger.Sighting, sizes ...int) []ledger.Sighting {
	switch r := g.R.IntN(8); {
	case len(sent) > 2 && r == 0:
		return sent[g.R.IntN(len(sent))]
	case len(sent) > 2 && r == 1:
		batch := slices.Clone(sent[g.R.IntN(len(sent))])
		for i := range batch {
			if g.R.IntN(4) == 0 {
				batch[i] = g.Sighting()
			}
		}
		return batch
	default:
		return g.Batch(1 + g.R.IntN(sizes[g.R.IntN(len(sizes))]))
	}
}
