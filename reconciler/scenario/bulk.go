package scenario

import (
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Bulk streams a large M-Pesa-shaped day without holding it: N intents
// spread over the first 23 hours of the window, about one provider
// transaction each, and one in every PerMille thousand intents carrying each
// anomaly (duplicate, missing, unknown charge, amount, currency, status,
// stuck) and each of two traps (a reversed duplicate, an unknown intent that
// evidence settles). Nine in ten transactions link by provider reference,
// one in ten by the echoed reference only. Every row is a pure function of
// Seed and its index, so intents and transactions can be streamed in two
// passes.
type Bulk struct {
	Seed     uint64
	Provider string
	// From starts the 24-hour window.
	From time.Time
	N    int
}

// Bulk slots: which rows carry what.
const (
	slotDuplicate = iota
	slotMissing
	slotUnknown
	slotAmount
	slotCurrency
	slotStatus
	slotStuck
	slotReversed
	slotSettled
	bulkSlots = 1000
)

// Window returns the day's window.
func (b Bulk) Window() (from, to time.Time) { return b.From, b.From.Add(24 * time.Hour) }

// Now is when the day is reconciled.
func (b Bulk) Now() time.Time { return b.From.Add(30 * time.Hour) }

// Grace is the settlement grace to reconcile with.
func (b Bulk) Grace() time.Duration { return time.Hour }

func (b Bulk) slot(i int) int { return int(mix(b.Seed, uint64(i)) % bulkSlots) }

// Expected counts the findings of each kind a correct reconcile reports,
// and the intents it settles.
func (b Bulk) Expected() (map[ledger.Kind]int, int) {
	kinds := map[ledger.Kind]int{}
	settled := 0
	for i := range b.N {
		switch b.slot(i) {
		case slotDuplicate:
			kinds[ledger.KindDuplicateCharge]++
		case slotMissing:
			kinds[ledger.KindMissingAtProvider]++
		case slotUnknown:
			kinds[ledger.KindUnknownCharge]++
		case slotAmount:
			kinds[ledger.KindAmountMismatch]++
		case slotCurrency:
			kinds[ledger.KindCurrencyMismatch]++
		case slotStatus:
			kinds[ledger.KindStatusMismatch]++
		case slotStuck:
			kinds[ledger.KindStuckIntent]++
		case slotSettled:
			settled++
		}
	}
	return kinds, settled
}

// mix is SplitMix64 of seed and i.
func mix(seed, i uint64) uint64 {
	z := seed + 0x9e3779b97f4a7c15*(i+1)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (b Bulk) created(i int) time.Time {
	step := int64(23*time.Hour) / int64(max(b.N, 1))
	return b.From.Add(time.Duration(int64(i) * step))
}

func (b Bulk) minor(i int) int64 { return int64(100+mix(b.Seed^0xa5, uint64(i))%24900) * 100 }

func kes(minor int64, cur string) money.Amount {
	return money.Amount{Value: decimal.New(minor, -2), Currency: cur}
}

func pad(prefix string, n uint64, width int) string {
	s := strconv.FormatUint(n, 10)
	buf := make([]byte, 0, len(prefix)+width)
	buf = append(buf, prefix...)
	for range width - len(s) {
		buf = append(buf, '0')
	}
	return string(append(buf, s...))
}

// Key is the key of intent i.
func (b Bulk) Key(i int) string { return pad("charge:order-", uint64(i), 9) }

func (b Bulk) checkout(i int, second bool) string {
	if second {
		return pad("ws_CO_060220241200002", uint64(i), 9) + "b"
	}
	return pad("ws_CO_060220241200001", uint64(i), 9)
}

// Intent returns intent i with its provider references.
func (b Bulk) Intent(i int) ledger.Intent {
	slot := b.slot(i)
	created := b.created(i)
	in := ledger.Intent{IntentParams: ledger.IntentParams{Key: b.Key(i), Provider: b.Provider,
		Amount: kes(b.minor(i), "KES"), Customer: pad("2547", mix(b.Seed^0x5a, uint64(i))%100000000, 8),
		Reference: pad("R", uint64(i), 11)},
		State: ledger.StateSucceeded, CreatedAt: created, UpdatedAt: created.Add(30 * time.Second)}
	if slot < 900 || slot > 990 {
		in.ProviderRefs = []string{b.checkout(i, false)}
	}
	switch slot {
	case slotDuplicate, slotReversed:
		in.ProviderRefs = []string{b.checkout(i, false), b.checkout(i, true)}
	case slotStatus:
		in.State = ledger.StateFailed
	case slotStuck:
		in.State, in.LeaseExpiresAt = ledger.StateProcessing, created.Add(15*time.Minute)
	case slotSettled:
		in.State = ledger.StateUnknown
	}
	return in
}

// Intents streams every intent, in creation order.
func (b Bulk) Intents(fn func(ledger.Intent) error) error {
	for i := range b.N {
		if err := fn(b.Intent(i)); err != nil {
			return err
		}
	}
	return nil
}

// TxnsOf streams the provider transactions of intent i.
func (b Bulk) TxnsOf(i int, fn func(ledger.ProviderTxn) error) error {
	slot := b.slot(i)
	if slot == slotMissing || slot == slotStuck {
		return nil
	}
	at := b.created(i).Add(time.Duration(20+i%60) * time.Second)
	t := ledger.ProviderTxn{Provider: b.Provider, ID: pad("S", uint64(i), 9), Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: kes(b.minor(i), "KES"), OccurredAt: at, Counterparty: "2547****" + strconv.Itoa(1000+i%9000)}
	if slot < 900 || slot > 990 {
		t.ProviderRef = b.checkout(i, false)
	} else {
		t.Reference = pad("R", uint64(i), 11)
	}
	switch slot {
	case slotAmount:
		t.Amount = kes(b.minor(i)-5000, "KES")
	case slotCurrency:
		t.Amount = kes(b.minor(i), "USD")
	}
	if err := fn(t); err != nil {
		return err
	}
	switch slot {
	case slotDuplicate, slotReversed:
		second := t
		second.ID, second.ProviderRef, second.OccurredAt = pad("T", uint64(i), 9), b.checkout(i, true), at.Add(time.Minute)
		if err := fn(second); err != nil {
			return err
		}
		if slot == slotReversed {
			rev := ledger.ProviderTxn{Provider: b.Provider, ID: pad("V", uint64(i), 9), Type: ledger.TxnReversal,
				Status: ledger.TxnSucceeded, Amount: second.Amount, OccurredAt: at.Add(time.Hour), LinkedID: second.ID}
			return fn(rev)
		}
	case slotUnknown:
		orphan := t
		orphan.ID, orphan.ProviderRef, orphan.Reference, orphan.OccurredAt = pad("U", uint64(i), 9), "", "INV-"+strconv.Itoa(i), at.Add(time.Second)
		return fn(orphan)
	}
	return nil
}

// Txns streams every provider transaction, intent by intent.
func (b Bulk) Txns(fn func(ledger.ProviderTxn) error) error {
	for i := range b.N {
		if err := b.TxnsOf(i, fn); err != nil {
			return err
		}
	}
	return nil
}
