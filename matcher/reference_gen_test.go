package matcher_test

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/money"
)

// A generator of random matchings for the differential tests: intents of
// both kinds in every state, provider transactions of every type and status
// (refunds, reversals, refund failures, fees, disputes and their reversals
// naming charges), provider references, manual links, references typed
// with other cases, separators, full-width forms, typos and look-alike
// characters, several currencies, times on a coarse grid (so that ties
// occur) on both sides of the window, and amounts at the edge of the
// matcher's range: the largest it takes, sums of those beyond its range,
// and amounts beyond it or beyond int64.

// byteSource is a random source read from fuzz input, eight bytes a
// number; once they run out, a generator seeded from all of them.
type byteSource struct {
	b    []byte
	tail *rand.PCG
}

func newByteSource(data []byte) *byteSource {
	h := fnv.New64a()
	h.Write(data)
	return &byteSource{b: data, tail: rand.NewPCG(h.Sum64(), uint64(len(data)))}
}

func (s *byteSource) Uint64() uint64 {
	if len(s.b) >= 8 {
		v := binary.LittleEndian.Uint64(s.b)
		s.b = s.b[8:]
		return v
	}
	return s.tail.Uint64()
}

var (
	genDay    = time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC)
	genCurs   = []string{"KES", "KES", "KES", "USD", "JPY", "BHD"}
	genCusts  = []string{"254712340845", "254700000001", "0712340845", "jane@example.com", ""}
	genMinors = []int64{1, 100, 250, 1500, 150050, 99999}
	// A reference's characters, look-alikes among them.
	genRefChars = []rune("0123456789OILSBAKX")
)

type gen struct {
	r     *rand.Rand
	sc    matchCase
	bases []string
	n     int // transactions so far
}

func (g *gen) pick(n int) int { return g.r.IntN(n) }

func (g *gen) chance(n int) bool { return g.r.IntN(n) == 0 }

// at is a time on a 15-minute grid from 5 hours before the window to 5
// hours after it.
func (g *gen) at() time.Time {
	return genDay.Add(-5 * time.Hour).Add(time.Duration(g.pick(34*4)) * 15 * time.Minute)
}

func (g *gen) amount(cur string) money.Amount {
	switch g.pick(150) {
	case 0:
		return mustMinor(ledger.CeilingMaxMinor, cur) // the largest amount taken
	case 1:
		return mustMinor(ledger.CeilingMaxMinor+1, cur) // beyond the range: unreadable
	case 2:
		return mustMinor(math.MaxInt64, cur)
	case 3:
		return money.Amount{Value: decimal.New(12345, -5), Currency: cur} // more decimals than the currency has
	case 4:
		return money.Amount{Value: decimal.RequireFromString("99999999999999999999999"), Currency: cur} // beyond int64
	}
	return mustMinor(genMinors[g.pick(len(genMinors))], cur)
}

func mustMinor(minor int64, cur string) money.Amount {
	a, err := money.FromMinor(minor, cur)
	if err != nil {
		panic(err)
	}
	return a
}

// base makes a reference: letters and digits, look-alikes included, now
// and then a non-ASCII letter.
func (g *gen) base() string {
	var b strings.Builder
	b.WriteString([]string{"INV", "AC", "", "Ö"}[g.pick(4)])
	for range 2 + g.pick(4) {
		b.WriteRune(genRefChars[g.pick(len(genRefChars))])
	}
	if g.chance(8) {
		b.WriteRune([]rune("ÉÅßж")[g.pick(4)])
	}
	return b.String()
}

// typed is reference s as a payer might type it: other cases, separators,
// spaces around it, full-width forms, a typo or a look-alike.
func (g *gen) typed(s string) string {
	rs := []rune(s)
	for range g.pick(4) {
		switch g.pick(9) {
		case 0: // case
			for i := range rs {
				if g.chance(2) {
					rs[i] = []rune(strings.ToLower(string(rs[i])))[0]
				}
			}
		case 1, 2: // a separator
			i := g.pick(len(rs) + 1)
			sep := []rune(" -./_#:")[g.pick(7)]
			rs = slices.Insert(rs, i, sep)
		case 3: // full-width
			for i, c := range rs {
				if c > ' ' && c < 0x7F && g.chance(2) {
					rs[i] = c + 0xFEE0
				}
			}
		case 4: // substitution
			if len(rs) > 0 {
				rs[g.pick(len(rs))] = genRefChars[g.pick(len(genRefChars))]
			}
		case 5: // insertion
			rs = slices.Insert(rs, g.pick(len(rs)+1), genRefChars[g.pick(len(genRefChars))])
		case 6: // deletion
			if len(rs) > 0 {
				i := g.pick(len(rs))
				rs = slices.Delete(rs, i, i+1)
			}
		case 7: // adjacent swap
			if len(rs) > 1 {
				i := g.pick(len(rs) - 1)
				rs[i], rs[i+1] = rs[i+1], rs[i]
			}
		case 8: // look-alike
			alike := map[rune]rune{'0': 'O', 'O': '0', '1': 'I', 'I': 'L', 'L': '1', '5': 'S', 'S': '5', '8': 'B', 'B': '8'}
			for i, c := range rs {
				if d, ok := alike[c]; ok && g.chance(2) {
					rs[i] = d
				}
			}
		}
	}
	out := string(rs)
	if g.chance(6) {
		out = "  " + out + " "
	}
	return out
}

// typo is reference s with one typo or look-alike: a close reference
// for suggestions.
func (g *gen) typo(s string) string {
	rs := []rune(s)
	if len(rs) == 0 {
		return s
	}
	i := g.pick(len(rs))
	switch g.pick(5) {
	case 0:
		rs[i] = genRefChars[g.pick(len(genRefChars))]
	case 1:
		rs = slices.Insert(rs, i, genRefChars[g.pick(len(genRefChars))])
	case 2:
		rs = slices.Delete(rs, i, i+1)
	case 3:
		if i+1 < len(rs) {
			rs[i], rs[i+1] = rs[i+1], rs[i]
		}
	case 4:
		alike := map[rune]rune{'0': 'O', 'O': '0', '1': 'I', 'I': '1', 'L': '1', '5': 'S', 'S': '5', '8': 'B', 'B': '8'}
		for i, c := range rs {
			if d, ok := alike[c]; ok {
				rs[i] = d
				break
			}
		}
	}
	return string(rs)
}

// fuzzyCluster adds intents of one customer and amount with nothing to
// link them by, and charges of that customer and amount near them: fuzzy
// candidates, some ambiguous.
func (g *gen) fuzzyCluster() {
	cust := genCusts[g.pick(len(genCusts)-1)]
	a := mustMinor(genMinors[g.pick(len(genMinors))], "KES")
	at := genDay.Add(time.Duration(g.pick(24)) * time.Hour)
	for i := range 1 + g.pick(3) {
		created := at.Add(time.Duration(g.pick(16)-8) * 15 * time.Minute)
		g.sc.intents = append(g.sc.intents, ledger.Intent{IntentParams: ledger.IntentParams{Key: fmt.Sprintf("fz%d", i),
			Provider: "mpesa", Amount: a, Customer: cust}, State: ledger.StateSucceeded, CreatedAt: created, UpdatedAt: created})
	}
	for range 1 + g.pick(3) {
		t := g.txn()
		t.Type, t.Status, t.Amount, t.Counterparty = ledger.TxnCharge, ledger.TxnSucceeded, a, ledger.MaskCustomer(cust)
		t.Reference, t.ProviderRef, t.LinkedID = "", "", ""
		t.OccurredAt = at.Add(time.Duration(g.pick(16)-8) * 15 * time.Minute)
	}
}

func genCase(r *rand.Rand) matchCase {
	g := &gen{r: r}
	tolerances := []time.Duration{0, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour}
	graces := []time.Duration{0, 30 * time.Minute, 2 * time.Hour}
	g.sc.opt = matcher.Options{Provider: "mpesa", From: genDay, To: genDay.Add(24 * time.Hour),
		Now:       genDay.Add(12 * time.Hour).Add(time.Duration(g.pick(23)) * time.Hour),
		Tolerance: tolerances[g.pick(len(tolerances))], Grace: graces[g.pick(len(graces))],
		Fuzzy: g.chance(2), ExactReferences: g.chance(5), ReversalsAreRefunds: g.chance(2), NoMissing: g.chance(8),
		OnlyDisputes: g.chance(10)}
	for range 1 + g.pick(6) {
		g.bases = append(g.bases, g.base())
	}
	nIntents := g.pick(20)
	states := []ledger.State{ledger.StatePending, ledger.StateProcessing, ledger.StateSucceeded, ledger.StateSucceeded,
		ledger.StateFailed, ledger.StateUnknown}
	for i := range nIntents {
		g.intent(fmt.Sprintf("k%d", i), states[g.pick(len(states))])
	}
	nTxns := g.pick(30)
	for range nTxns {
		g.txn()
	}
	if g.chance(12) {
		g.overflow()
	}
	if g.sc.opt.Fuzzy && g.chance(3) {
		g.fuzzyCluster()
	}
	// Manual links name charges and charge intents (or an intent that
	// does not exist).
	for range g.pick(3) {
		var charges []string
		for _, t := range g.sc.txns {
			if t.Type == ledger.TxnCharge {
				charges = append(charges, t.ID)
			}
		}
		var keys []string
		for _, in := range g.sc.intents {
			if in.RefundOf == "" {
				keys = append(keys, in.Key)
			}
		}
		if len(charges) == 0 || len(keys) == 0 {
			break
		}
		key := keys[g.pick(len(keys))]
		if g.chance(5) {
			key = "nope"
		}
		g.sc.manual = append(g.sc.manual, [2]string{charges[g.pick(len(charges))], key})
	}
	return g.sc
}

// intent adds an intent keyed key; now and then a refund of an earlier
// charge intent (or of one not given).
func (g *gen) intent(key string, st ledger.State) {
	created := g.at()
	in := ledger.Intent{IntentParams: ledger.IntentParams{Key: key, Provider: "mpesa", Customer: genCusts[g.pick(len(genCusts))]},
		State: st, CreatedAt: created, UpdatedAt: created.Add(time.Duration(g.pick(20)) * 15 * time.Minute)}
	cur := genCurs[g.pick(len(genCurs))]
	if g.chance(4) {
		var charges []ledger.Intent
		for _, c := range g.sc.intents {
			if c.RefundOf == "" {
				charges = append(charges, c)
			}
		}
		in.Kind, in.RefundOf = ledger.IntentRefund, "ghost"
		if len(charges) > 0 && !g.chance(6) {
			c := charges[g.pick(len(charges))]
			in.RefundOf, cur = c.Key, c.Amount.Currency
		}
		if g.chance(2) {
			in.Key = "refund:" + key
		}
	}
	in.Amount = g.amount(cur)
	if in.RefundOf == "" && g.chance(3) {
		// An expected payment, with now and then a due date and a
		// tolerance; its payments come in parts (instalments).
		in.Kind = ledger.IntentExpected
		if g.chance(2) {
			in.DueAt = g.at()
		}
		if g.chance(3) {
			if m, err := in.Amount.Minor(); err == nil && m > 2 {
				in.Tolerance = mustMinor(int64(g.pick(int(min(m-1, 500)))), cur)
			}
		}
		defer g.instalments()
	}
	switch g.pick(5) {
	case 0:
	case 1:
		in.Reference = ledger.DeriveReference(in.Key)
	default:
		in.Reference = strings.TrimSpace(g.typed(g.bases[g.pick(len(g.bases))]))
	}
	if st == ledger.StateProcessing && g.chance(2) {
		in.LeaseExpiresAt = created.Add(time.Duration(g.pick(12)) * 15 * time.Minute)
	}
	for range g.pick(3) {
		if in.RefundOf != "" && g.chance(2) {
			in.ProviderRefs = append(in.ProviderRefs, fmt.Sprintf("T%03d", g.pick(30))) // a refund's id
		} else {
			in.ProviderRefs = append(in.ProviderRefs, fmt.Sprintf("ws_CO_%d", g.pick(12)))
		}
	}
	slices.Sort(in.ProviderRefs)
	in.ProviderRefs = slices.Compact(in.ProviderRefs)
	g.sc.intents = append(g.sc.intents, in)
}

var (
	genTypes = []ledger.TxnType{ledger.TxnCharge, ledger.TxnCharge, ledger.TxnCharge, ledger.TxnCharge, ledger.TxnCharge,
		ledger.TxnRefund, ledger.TxnRefund, ledger.TxnReversal, ledger.TxnReversal, ledger.TxnFee, ledger.TxnPayout,
		ledger.TxnDispute, ledger.TxnDisputeReversal, ledger.TxnRefundFailure, ledger.TxnAdjustment, ledger.TxnOther}
	genStatuses = []ledger.TxnStatus{ledger.TxnSucceeded, ledger.TxnSucceeded, ledger.TxnSucceeded, ledger.TxnFailed, ledger.TxnPending}
)

// txn adds a provider transaction, most often about one of the intents.
func (g *gen) txn() *ledger.ProviderTxn {
	id := fmt.Sprintf("T%03d", g.n)
	g.n++
	t := ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: genTypes[g.pick(len(genTypes))], Status: genStatuses[g.pick(len(genStatuses))],
		OccurredAt: g.at(), Counterparty: ledger.MaskCustomer(genCusts[g.pick(len(genCusts))])}
	var target *ledger.Intent
	if len(g.sc.intents) > 0 && !g.chance(5) {
		target = &g.sc.intents[g.pick(len(g.sc.intents))]
	}
	t.Amount = g.amount(genCurs[g.pick(len(genCurs))])
	if target != nil {
		if !g.chance(4) {
			t.Amount = target.Amount
			if t.Amount.Value.IsPositive() && t.Type != ledger.TxnCharge && g.chance(3) {
				t.Amount.Value = t.Amount.Value.Neg() // providers sign money going back
			}
		}
		if g.chance(2) {
			t.OccurredAt = target.CreatedAt.Add(time.Duration(g.pick(9)-2) * 15 * time.Minute)
		}
		if g.chance(2) {
			t.Counterparty = ledger.MaskCustomer(target.Customer)
		}
		switch g.pick(7) {
		case 0, 1:
			if len(target.ProviderRefs) > 0 {
				t.ProviderRef = target.ProviderRefs[g.pick(len(target.ProviderRefs))]
			}
		case 2, 3:
			t.Reference = g.typed(target.Reference)
		case 4:
			t.Reference = target.Key
			if g.chance(3) {
				t.Reference = " " + t.Reference
			}
		case 5:
			t.Reference = g.typed(g.bases[g.pick(len(g.bases))])
		case 6:
			t.Reference = g.typo(target.Reference)
		}
	} else if g.chance(2) {
		t.ProviderRef = fmt.Sprintf("ws_CO_%d", g.pick(12))
	}
	if t.Type != ledger.TxnCharge && (g.pick(3) > 0 || t.Type == ledger.TxnDispute || t.Type == ledger.TxnDisputeReversal) {
		t.LinkedID = fmt.Sprintf("T%03d", g.pick(g.n+3))
		if g.chance(10) {
			t.LinkedID = "ghost"
		}
	}
	g.sc.txns = append(g.sc.txns, t)
	return &g.sc.txns[len(g.sc.txns)-1]
}

// instalments adds payments of the last intent (an expected payment) in
// parts: an exact split, a short one, an over one, or a repeat in full.
func (g *gen) instalments() {
	in := g.sc.intents[len(g.sc.intents)-1]
	minor, err := in.Amount.Minor()
	if err != nil || minor < 4 || minor > ledger.CeilingMaxMinor/4 {
		return
	}
	var parts []int64
	switch g.pick(4) {
	case 0:
		a := 1 + int64(g.pick(int(minor-1)))
		parts = []int64{a, minor - a}
	case 1:
		parts = []int64{minor / 3, minor / 3, minor - 2*(minor/3)}
	case 2:
		parts = []int64{minor / 2}
	case 3:
		parts = []int64{minor, minor}
	}
	if g.chance(3) {
		parts[len(parts)-1] += int64(g.pick(3)) - 1 // a shilling off either way
	}
	for _, p := range parts {
		if p <= 0 {
			continue
		}
		t := g.txn()
		t.Type, t.Status, t.LinkedID, t.ProviderRef = ledger.TxnCharge, ledger.TxnSucceeded, "", ""
		t.Amount = mustMinor(p, in.Amount.Currency)
		t.Reference = g.typed(in.Reference)
		if in.Reference == "" {
			t.Reference = in.Key
		}
		t.OccurredAt = in.CreatedAt.Add(time.Duration(g.pick(40)) * 15 * time.Minute)
	}
}

// overflow adds evidence whose sums leave the matcher's range: a dozen
// transactions of the largest amount it takes, about one charge or intent.
func (g *gen) overflow() {
	big := mustMinor(ledger.CeilingMaxMinor, "KES")
	key := fmt.Sprintf("big%d", len(g.sc.intents))
	st := []ledger.State{ledger.StateSucceeded, ledger.StatePending, ledger.StateFailed}[g.pick(3)]
	created := genDay.Add(time.Duration(g.pick(24)) * time.Hour)
	in := ledger.Intent{IntentParams: ledger.IntentParams{Key: key, Provider: "mpesa", Amount: big, Reference: "BIG" + key},
		State: st, CreatedAt: created, UpdatedAt: created, ProviderRefs: []string{"ws_big_" + key}}
	what := g.pick(5)
	if what == 3 {
		in.Kind, in.RefundOf = ledger.IntentRefund, "ghost"
	}
	g.sc.intents = append(g.sc.intents, in)
	charge := g.txn()
	charge.Type, charge.Status, charge.Amount, charge.ProviderRef, charge.LinkedID = ledger.TxnCharge, ledger.TxnSucceeded, big, "ws_big_"+key, ""
	charge.Reference, charge.OccurredAt = "", created
	if what == 4 {
		charge.ProviderRef = "" // an unknown charge
	}
	n := 10 + g.pick(6)
	for range n {
		t := g.txn()
		t.Amount, t.Status, t.Reference, t.ProviderRef, t.LinkedID = big, ledger.TxnSucceeded, "", "", charge.ID
		t.OccurredAt = created.Add(time.Duration(g.pick(8)) * time.Hour)
		switch what {
		case 0, 4: // refunds, reversals and refund failures of the charge
			t.Type = []ledger.TxnType{ledger.TxnRefund, ledger.TxnReversal, ledger.TxnRefundFailure, ledger.TxnRefundFailure}[g.pick(4)]
		case 1: // charges
			t.Type, t.ProviderRef, t.LinkedID = ledger.TxnCharge, "ws_big_"+key, ""
		case 2: // disputes
			t.Type = []ledger.TxnType{ledger.TxnDispute, ledger.TxnDispute, ledger.TxnDisputeReversal}[g.pick(3)]
		case 3: // refunds, for the refund intent
			t.Type, t.LinkedID, t.Reference = ledger.TxnRefund, "", key
		}
	}
}
