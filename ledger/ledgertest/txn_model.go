package ledgertest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// TxnModel is the provider transactions, their sources and the quarantined
// conflicts in memory, as the rules of TxnStore.UpsertProviderTxns define
// them. Record is written step by step as set statements over a staged
// batch once applied them (new transactions from their first sighting,
// then the contradictions, the fills and the sources of the rest), apart
// from ledger.ClassifySightings, so that stores and the ledger's decision
// are both held to it. Times are kept to the microsecond, as stored.
type TxnModel struct {
	txns       map[modelKey]*modelTxn
	quarantine []ledger.QuarantineItem
	// quarantined holds the ledger.ConflictKey of every item.
	quarantined map[string]bool
}

type modelKey struct{ provider, id string }

type modelTxn struct {
	t       ledger.ProviderTxn
	sources map[[2]string]ledger.Source
}

// NewTxnModel returns empty books.
func NewTxnModel() *TxnModel {
	return &TxnModel{txns: map[modelKey]*modelTxn{}, quarantined: map[string]bool{}}
}

func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func keyOf(t *ledger.ProviderTxn) modelKey { return modelKey{t.Provider, t.ID} }

// Record records batch, a valid batch, and returns its counts.
func (m *TxnModel) Record(batch []ledger.Sighting) ledger.UpsertCounts {
	var c ledger.UpsertCounts
	// New transactions, each from its first sighting.
	created := map[modelKey]bool{}
	named := map[modelKey]int{}
	for _, s := range batch {
		k := keyOf(&s.Txn)
		named[k]++
		if m.txns[k] == nil {
			t := s.Txn
			t.OccurredAt, t.FirstSeenAt, t.UpdatedAt = micro(t.OccurredAt), micro(s.Source.ReceivedAt), micro(s.Source.ReceivedAt)
			t.Sources = nil
			m.txns[k] = &modelTxn{t: t, sources: map[[2]string]ledger.Source{}}
			created[k] = true
		}
	}
	c.NewTxns = len(created)
	// The rows that meet a stored transaction: all but those that created
	// theirs alone.
	var meet []int
	for i, s := range batch {
		if k := keyOf(&s.Txn); !created[k] || named[k] > 1 {
			meet = append(meet, i)
		}
	}
	conflict := m.conflicts(batch, meet, &c)
	m.fill(batch, meet, conflict)
	for _, i := range meet {
		if !conflict[i] && m.addSource(&batch[i]) {
			c.NewSources++
		}
	}
	for i, s := range batch {
		if k := keyOf(&s.Txn); created[k] && named[k] == 1 && m.addSource(&batch[i]) {
			c.NewSources++
		}
	}
	for _, cf := range c.Conflicts {
		s := &batch[cf.Index]
		q := ledger.ConflictItem(s.Txn, s.Source, cf.Reason)
		q.At = micro(q.At)
		if k := ledger.ConflictKey(q); !m.quarantined[k] {
			m.quarantined[k] = true
			m.quarantine = append(m.quarantine, q)
		}
	}
	c.Duplicates = len(batch) - c.NewSources - len(c.Conflicts)
	return c
}

// conflicts finds the rows of meet that contradict their stored
// transaction, adds them to c in batch order and returns them.
func (m *TxnModel) conflicts(batch []ledger.Sighting, meet []int, c *ledger.UpsertCounts) map[int]bool {
	hard := map[int]bool{}
	// final is, per pending transaction, the first final status an
	// agreeing row brings, at fseq.
	type fin struct {
		status ledger.TxnStatus
		seq    int
	}
	final := map[modelKey]fin{}
	for _, i := range meet {
		s := &batch[i].Txn
		p := &m.txns[keyOf(s)].t
		d := micro(s.OccurredAt).Sub(p.OccurredAt)
		hard[i] = !s.Amount.Value.Equal(p.Amount.Value) || s.Amount.Currency != p.Amount.Currency || s.Type != p.Type ||
			d > 24*time.Hour || d < -24*time.Hour ||
			(s.Settlement.Currency != "" && p.Settlement.Currency != "" && !s.Settlement.Equal(p.Settlement))
		if _, ok := final[keyOf(s)]; !ok && !hard[i] && s.Status != ledger.TxnPending && p.Status == ledger.TxnPending {
			final[keyOf(s)] = fin{s.Status, i}
		}
	}
	out := map[int]bool{}
	for _, i := range meet {
		s := &batch[i].Txn
		p := m.txns[keyOf(s)].t
		f, ok := final[keyOf(s)]
		against, known := p.Status, true
		if p.Status == ledger.TxnPending {
			against, known = f.status, ok
		}
		if !hard[i] && (s.Status == ledger.TxnPending || !known || s.Status == against) {
			continue
		}
		out[i] = true
		if p.Status == ledger.TxnPending && ok && f.seq < i {
			p.Status = f.status
		}
		c.Conflicts = append(c.Conflicts, ledger.SightingConflict{Index: i, Reason: ledger.Conflict(p, *s)})
	}
	return out
}

// fill fills the empty fields of the stored transactions of meet from the
// first agreeing row that has each.
func (m *TxnModel) fill(batch []ledger.Sighting, meet []int, conflict map[int]bool) {
	type firsts struct {
		reference, providerRef, counterparty, linked, status, settlement int
	}
	var keys []modelKey
	by := map[modelKey]*firsts{}
	for _, i := range meet {
		s := &batch[i].Txn
		k := keyOf(s)
		p := &m.txns[k].t
		if conflict[i] || !((p.Reference == "" && s.Reference != "") || (p.ProviderRef == "" && s.ProviderRef != "") ||
			(p.Counterparty == "" && s.Counterparty != "") || (p.LinkedID == "" && s.LinkedID != "") ||
			(p.Status == ledger.TxnPending && s.Status != ledger.TxnPending) ||
			(p.Settlement.Currency == "" && s.Settlement.Currency != "")) {
			continue
		}
		f := by[k]
		if f == nil {
			f = &firsts{-1, -1, -1, -1, -1, -1}
			by[k] = f
			keys = append(keys, k)
		}
		for _, x := range []struct {
			at  *int
			has bool
		}{{&f.reference, s.Reference != ""}, {&f.providerRef, s.ProviderRef != ""}, {&f.counterparty, s.Counterparty != ""},
			{&f.linked, s.LinkedID != ""}, {&f.status, s.Status != ledger.TxnPending},
			{&f.settlement, s.Settlement.Currency != ""}} {
			if x.has && *x.at < 0 {
				*x.at = i
			}
		}
	}
	for _, k := range keys {
		f, p := by[k], &m.txns[k].t
		var (
			updated time.Time
			changed bool
		)
		take := func(empty bool, at int, set func(*ledger.Sighting)) {
			if empty && at >= 0 {
				set(&batch[at])
				if r := micro(batch[at].Source.ReceivedAt); !changed || r.After(updated) {
					updated, changed = r, true
				}
			}
		}
		take(p.Reference == "", f.reference, func(s *ledger.Sighting) { p.Reference = s.Txn.Reference })
		take(p.ProviderRef == "", f.providerRef, func(s *ledger.Sighting) { p.ProviderRef = s.Txn.ProviderRef })
		take(p.Counterparty == "", f.counterparty, func(s *ledger.Sighting) { p.Counterparty = s.Txn.Counterparty })
		take(p.LinkedID == "", f.linked, func(s *ledger.Sighting) { p.LinkedID = s.Txn.LinkedID })
		take(p.Status == ledger.TxnPending, f.status, func(s *ledger.Sighting) { p.Status = s.Txn.Status })
		take(p.Settlement.Currency == "", f.settlement, func(s *ledger.Sighting) {
			p.Settlement, p.ExchangeRate = s.Txn.Settlement, s.Txn.ExchangeRate
		})
		if changed {
			p.UpdatedAt = updated
		}
	}
}

// addSource adds s's source unless its channel and ref are stored.
func (m *TxnModel) addSource(s *ledger.Sighting) bool {
	x := m.txns[keyOf(&s.Txn)]
	k := [2]string{s.Source.Channel, s.Source.Ref}
	if _, ok := x.sources[k]; ok {
		return false
	}
	src := s.Source
	src.ReceivedAt = micro(src.ReceivedAt)
	x.sources[k] = src
	return true
}

// Probe returns what a store would read of batch before writing it.
func (m *TxnModel) Probe(batch []ledger.Sighting) []ledger.Probe {
	probes := make([]ledger.Probe, len(batch))
	for i, s := range batch {
		x := m.txns[keyOf(&s.Txn)]
		if x == nil {
			continue
		}
		t := &x.t
		var empty ledger.TxnFields
		for f, v := range map[ledger.TxnFields]string{ledger.FillReference: t.Reference, ledger.FillProviderRef: t.ProviderRef,
			ledger.FillCounterparty: t.Counterparty, ledger.FillLinkedID: t.LinkedID} {
			if v == "" {
				empty |= f
			}
		}
		_, recorded := x.sources[[2]string{s.Source.Channel, s.Source.Ref}]
		probes[i] = ledger.Probe{Found: true, Recorded: recorded, Txn: ledger.StoredTxn{Account: t.Account, Type: t.Type, Status: t.Status,
			Amount: t.Amount, OccurredAt: t.OccurredAt, Settlement: t.Settlement, Empty: empty}}
	}
	return probes
}

// Apply writes plan, as ledger.ClassifySightings decided it for batch, as
// a store does.
func (m *TxnModel) Apply(batch []ledger.Sighting, plan ledger.UpsertPlan) {
	for _, w := range plan.Txns {
		t := w.Txn(batch)
		t.FirstSeenAt, t.UpdatedAt = micro(t.FirstSeenAt), micro(t.UpdatedAt)
		if w.Create {
			t.OccurredAt = micro(t.OccurredAt)
			m.txns[keyOf(&t)] = &modelTxn{t: t, sources: map[[2]string]ledger.Source{}}
			continue
		}
		p := &m.txns[keyOf(&t)].t
		for _, f := range []struct {
			field      ledger.TxnFields
			from, into *string
		}{{ledger.FillReference, &t.Reference, &p.Reference}, {ledger.FillProviderRef, &t.ProviderRef, &p.ProviderRef},
			{ledger.FillCounterparty, &t.Counterparty, &p.Counterparty}, {ledger.FillLinkedID, &t.LinkedID, &p.LinkedID}} {
			if w.Fills&f.field != 0 {
				*f.into = *f.from
			}
		}
		if w.Fills&ledger.FillStatus != 0 {
			p.Status = t.Status
		}
		if w.Fills&ledger.FillSettlement != 0 {
			p.Settlement, p.ExchangeRate = t.Settlement, t.ExchangeRate
		}
		p.UpdatedAt = t.UpdatedAt
	}
	for _, i := range plan.Sources {
		if !m.addSource(&batch[i]) {
			panic(fmt.Sprintf("plan adds the stored source of sighting %d", i))
		}
	}
	for i, v := range plan.Verdicts {
		if v.Conflict == "" {
			continue
		}
		q := ledger.ConflictItem(batch[i].Txn, batch[i].Source, v.Conflict)
		q.At = micro(q.At)
		if k := ledger.ConflictKey(q); !m.quarantined[k] {
			m.quarantined[k] = true
			m.quarantine = append(m.quarantine, q)
		}
	}
}

// Dump renders the books of provider as DumpProviderBooks renders a
// store's.
func (m *TxnModel) Dump(provider string) string {
	var txns []ledger.ProviderTxn
	for k, x := range m.txns {
		if k.provider != provider {
			continue
		}
		t := x.t
		for _, s := range x.sources {
			t.Sources = append(t.Sources, s)
		}
		slices.SortFunc(t.Sources, func(a, b ledger.Source) int {
			if c := a.ReceivedAt.Compare(b.ReceivedAt); c != 0 {
				return c
			}
			if c := strings.Compare(a.Channel, b.Channel); c != 0 {
				return c
			}
			return strings.Compare(a.Ref, b.Ref)
		})
		txns = append(txns, t)
	}
	var q []ledger.QuarantineItem
	for _, it := range m.quarantine {
		if it.Source == provider+"_conflict" {
			q = append(q, it)
		}
	}
	return renderBooks(txns, q)
}
