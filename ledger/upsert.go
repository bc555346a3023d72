package ledger

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

// What recording a batch of sightings does is decided here, once, for
// every store (TxnStore.UpsertProviderTxns): the store reads what it holds
// of the batch's keys (a Probe per sighting), ClassifySightings says what
// each sighting does, and the store writes exactly that: the transactions
// to create or to fill, the sources to add and the conflicts to
// quarantine. A store holds no rule of its own.
//
// The rules, applied as if the sightings were recorded one after the other
// in batch order:
//   - A transaction not stored is created from its first sighting in the
//     batch; a later sighting of it meets that one as stored.
//   - A sighting contradicts the stored transaction when the amount,
//     currency or type differ, when the times are more than a day apart
//     (compared to the microsecond, as stored), when both name a
//     settlement and the settlements differ, or when both statuses are
//     final and differ. The first kept wins: a contradiction changes
//     nothing, adds no source, and is quarantined (once).
//   - A pending status becomes the first final status an agreeing sighting
//     brings; a later final status of the same batch then meets that one.
//   - An agreeing sighting fills the empty fields of the stored transaction
//     (reference, provider reference, counterparty, linked id, a pending
//     status, the settlement with its exchange rate): each from the first
//     sighting in batch order that has it. Settlements a batch fills meet
//     no other sighting of it: only a stored settlement contradicts.
//     updated_at becomes the time of receipt of the latest sighting that
//     filled something.
//   - An agreeing sighting adds its source unless a source of the same
//     channel and ref is stored or added earlier in the batch.

// TxnFields is a set of the fields of a provider transaction that a
// sighting fills when they are empty (a pending status counts as empty).
// Nothing else of a stored transaction ever changes.
type TxnFields uint8

// The fields a sighting may fill.
const (
	FillReference TxnFields = 1 << iota
	FillProviderRef
	FillCounterparty
	FillLinkedID
	// FillStatus makes a pending status final.
	FillStatus
	// FillSettlement sets the settlement amount and currency, and the
	// exchange rate with them.
	FillSettlement
)

// numFills is the number of fields in TxnFields.
const numFills = 6

// textFills are the fields StoredTxn.Empty describes.
const textFills = FillReference | FillProviderRef | FillCounterparty | FillLinkedID

var fillNames = [numFills]string{"reference", "provider_ref", "counterparty", "linked_id", "status", "settlement"}

// String lists the fields, "reference|status"; "-" for none.
func (f TxnFields) String() string {
	var names []string
	for b := range numFills {
		if f&(1<<b) != 0 {
			names = append(names, fillNames[b])
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, "|")
}

// StoredTxn is what deciding about a sighting needs of its stored
// transaction: the fields a sighting must agree with, and which of the text
// fields it may fill are empty.
type StoredTxn struct {
	// Account is the provider account the transaction belongs to.
	Account string
	Type    TxnType
	Status  TxnStatus
	Amount  money.Amount
	// OccurredAt is as stored: UTC, to the microsecond.
	OccurredAt time.Time
	// Settlement is the zero Amount when the transaction has none.
	Settlement money.Amount
	// Empty lists which of FillReference, FillProviderRef, FillCounterparty
	// and FillLinkedID are empty.
	Empty TxnFields
}

// Probe is what a store read, before writing a batch, of one of its
// sightings: the stored transaction of its key and whether its source is
// stored.
type Probe struct {
	// Found says the sighting's transaction is stored; Txn is what it holds.
	Found bool
	Txn   StoredTxn
	// Recorded says a source of the sighting's channel and ref is stored
	// with that transaction.
	Recorded bool
}

// SightingVerdict says what recording one sighting of a batch does. A
// sighting either contradicts its transaction (Conflict) or does any of
// the rest; one that does none of them is known already.
type SightingVerdict struct {
	// Creates says the sighting is the first of a transaction not stored,
	// which is created from it.
	Creates bool
	// Fills lists the empty fields of the sighting's transaction that it
	// fills.
	Fills TxnFields
	// NewSource says the sighting's source is added.
	NewSource bool
	// Conflict, when set, says how the sighting contradicts its
	// transaction: it is quarantined and nothing of it stored.
	Conflict string
}

// Known reports that the sighting changes nothing: it agrees with its
// transaction, fills nothing and its source is stored.
func (v SightingVerdict) Known() bool {
	return !v.Creates && v.Fills == 0 && !v.NewSource && v.Conflict == ""
}

// TxnWrite is a transaction that a batch creates or fills.
type TxnWrite struct {
	// Index is the position in the batch of the transaction's first
	// sighting: the one it is created from, when Create.
	Index int
	// Create says the transaction is new.
	Create bool
	// Fills lists the fields filled by sightings of the batch: of a stored
	// transaction, those it had empty; of a created one, those its first
	// sighting left empty and a later one has.
	Fills TxnFields
	// from holds, per field of Fills, the position of the sighting it
	// comes from.
	from [numFills]int32
}

// From returns the position in the batch of the sighting that fills
// field (one of the Fill constants), or -1 when the batch does not fill it.
func (w *TxnWrite) From(field TxnFields) int {
	if w.Fills&field == 0 {
		return -1
	}
	for b := range numFills {
		if field == 1<<b {
			return int(w.from[b])
		}
	}
	return -1
}

// Txn returns the transaction to write. Created: the first sighting's
// transaction with the fields later ones fill, first seen when that
// sighting was received. Filled: the provider, id and filled fields alone
// (the exchange rate with the settlement). UpdatedAt is when the latest
// sighting that filled a field was received, or, of a created transaction
// that nothing filled, when it was first seen. Sources is left empty.
func (w *TxnWrite) Txn(batch []Sighting) ProviderTxn {
	first := &batch[w.Index]
	var t ProviderTxn
	if w.Create {
		t = first.Txn
		t.Sources = nil
		t.FirstSeenAt, t.UpdatedAt = first.Source.ReceivedAt, first.Source.ReceivedAt
	} else {
		t = ProviderTxn{Provider: first.Txn.Provider, ID: first.Txn.ID}
	}
	if w.Fills == 0 {
		return t
	}
	var updated time.Time
	for b := range numFills {
		if w.Fills&(1<<b) == 0 {
			continue
		}
		s := &batch[w.from[b]]
		if at := s.Source.ReceivedAt; at.After(updated) {
			updated = at
		}
		switch TxnFields(1 << b) {
		case FillReference:
			t.Reference = s.Txn.Reference
		case FillProviderRef:
			t.ProviderRef = s.Txn.ProviderRef
		case FillCounterparty:
			t.Counterparty = s.Txn.Counterparty
		case FillLinkedID:
			t.LinkedID = s.Txn.LinkedID
		case FillStatus:
			t.Status = s.Txn.Status
		case FillSettlement:
			t.Settlement, t.ExchangeRate = s.Txn.Settlement, s.Txn.ExchangeRate
		}
	}
	t.UpdatedAt = updated
	return t
}

// UpsertPlan is what recording a batch of sightings does, as
// ClassifySightings decided it.
type UpsertPlan struct {
	// Verdicts[i] is the verdict on the batch's sighting i.
	Verdicts []SightingVerdict
	// Txns lists the transactions to create or fill, in key order
	// (provider, then id, bytewise): the order in which writers take them.
	Txns []TxnWrite
	// Sources lists the positions of the sightings whose source is added,
	// in key order (provider, id, channel, ref).
	Sources []int
	// Found counts the sightings whose transaction was stored before the
	// batch.
	Found int
}

// Counts returns what the plan changes as UpsertCounts: the conflicts in
// batch order, and every sighting that adds no source and contradicts
// nothing as a duplicate.
func (p *UpsertPlan) Counts() UpsertCounts {
	var c UpsertCounts
	for i, v := range p.Verdicts {
		switch {
		case v.Conflict != "":
			c.Conflicts = append(c.Conflicts, SightingConflict{Index: i, Reason: v.Conflict})
		case v.NewSource:
			c.NewSources++
		default:
			c.Duplicates++
		}
		if v.Creates {
			c.NewTxns++
		}
	}
	return c
}

// Writes reports whether the plan writes anything: a transaction, a
// source or a conflict.
func (p *UpsertPlan) Writes() bool {
	if len(p.Txns) > 0 || len(p.Sources) > 0 {
		return true
	}
	for _, v := range p.Verdicts {
		if v.Conflict != "" {
			return true
		}
	}
	return false
}

// ClassifySightings decides what recording batch does (see the rules
// above), given what the store read of it: probes[i] is the probe of
// batch[i], and nil probes say that no key of the batch is stored (a store
// that guessed so, and finds out otherwise when a write meets a stored
// key). The batch must be valid (ValidateSightings).
func ClassifySightings(batch []Sighting, probes []Probe) UpsertPlan {
	plan := UpsertPlan{Verdicts: make([]SightingVerdict, len(batch))}
	order := keyOrder(batch)
	var c classifier
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && sameKey(&batch[order[lo]].Txn, &batch[order[hi]].Txn) {
			hi++
		}
		c.txn(&plan, batch, probes, order[lo:hi])
		lo = hi
	}
	return plan
}

// keyOrder returns the positions of batch sorted by key (provider, then
// id, bytewise), then by position.
func keyOrder(batch []Sighting) []int32 {
	order := make([]int32, len(batch))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &batch[a].Txn, &batch[b].Txn
		if c := cmp.Compare(x.Provider, y.Provider); c != 0 {
			return c
		}
		if c := cmp.Compare(x.ID, y.ID); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return order
}

func sameKey(a, b *ProviderTxn) bool { return a.ID == b.ID && a.Provider == b.Provider }

// classifier decides about the sightings of one transaction at a time,
// keeping its buffers from one to the next.
type classifier struct {
	// added holds the positions of the sightings of the transaction whose
	// source is added.
	added []int32
	// refs indexes added by channel and ref, when many.
	refs map[[2]string]bool
}

// txn decides about rows, the positions of the sightings of one
// transaction in batch order, and adds what they do to plan.
func (c *classifier) txn(plan *UpsertPlan, batch []Sighting, probes []Probe, rows []int32) {
	c.added, c.refs = c.added[:0], nil
	w := TxnWrite{Index: int(rows[0])}
	found := probes != nil && probes[rows[0]].Found
	var st StoredTxn
	if found {
		st = probes[rows[0]].Txn
		plan.Found += len(rows)
	} else {
		first := &batch[rows[0]]
		st = storedOf(&first.Txn)
		w.Create = true
		plan.Verdicts[rows[0]] = SightingVerdict{Creates: true, NewSource: true}
		c.added = append(c.added, rows[0])
		rows = rows[1:]
	}
	// status is the status a sighting meets: the stored one, until a
	// sighting of the batch makes a pending one final.
	status := st.Status
	open := st.Empty & textFills
	if st.Status == TxnPending {
		open |= FillStatus
	}
	if st.Settlement.Currency == "" {
		open |= FillSettlement
	}
	for _, i := range rows {
		s := &batch[i]
		v := &plan.Verdicts[i]
		if contradicts(&st, status, &s.Txn) {
			met := ProviderTxn{Account: st.Account, Type: st.Type, Status: status, Amount: st.Amount, OccurredAt: st.OccurredAt,
				Settlement: st.Settlement}
			v.Conflict = Conflict(met, s.Txn)
			continue
		}
		if fills := open & carries(&s.Txn) &^ w.Fills; fills != 0 {
			v.Fills, w.Fills = fills, w.Fills|fills
			for b := range numFills {
				if fills&(1<<b) != 0 {
					w.from[b] = i
				}
			}
			if fills&FillStatus != 0 {
				status = s.Txn.Status
			}
		}
		if !(found && probes[i].Recorded) && c.addSource(batch, i) {
			v.NewSource = true
		}
	}
	if w.Create || w.Fills != 0 {
		plan.Txns = append(plan.Txns, w)
	}
	if len(c.added) > 1 {
		slices.SortFunc(c.added, func(a, b int32) int {
			x, y := &batch[a].Source, &batch[b].Source
			if c := cmp.Compare(x.Channel, y.Channel); c != 0 {
				return c
			}
			return cmp.Compare(x.Ref, y.Ref)
		})
	}
	for _, i := range c.added {
		plan.Sources = append(plan.Sources, int(i))
	}
}

// addSource adds the source of batch[i] to those the transaction's
// sightings add, unless one of the same channel and ref is there already.
func (c *classifier) addSource(batch []Sighting, i int32) bool {
	src := &batch[i].Source
	const many = 16
	if c.refs == nil && len(c.added) < many {
		for _, j := range c.added {
			if o := &batch[j].Source; o.Channel == src.Channel && o.Ref == src.Ref {
				return false
			}
		}
		c.added = append(c.added, i)
		return true
	}
	if c.refs == nil {
		c.refs = make(map[[2]string]bool, 2*many)
		for _, j := range c.added {
			c.refs[[2]string{batch[j].Source.Channel, batch[j].Source.Ref}] = true
		}
	}
	k := [2]string{src.Channel, src.Ref}
	if c.refs[k] {
		return false
	}
	c.refs[k] = true
	c.added = append(c.added, i)
	return true
}

// storedOf is t as a store keeps it, for the later sightings of a batch
// that creates it.
func storedOf(t *ProviderTxn) StoredTxn {
	return StoredTxn{Account: t.Account, Type: t.Type, Status: t.Status, Amount: t.Amount, OccurredAt: t.OccurredAt.UTC().Truncate(time.Microsecond),
		Settlement: t.Settlement, Empty: ^carries(t) & textFills}
}

// carries returns the fields that t has a value for: the text fields that
// are not empty, a final status and a settlement.
func carries(t *ProviderTxn) TxnFields {
	var f TxnFields
	if t.Reference != "" {
		f |= FillReference
	}
	if t.ProviderRef != "" {
		f |= FillProviderRef
	}
	if t.Counterparty != "" {
		f |= FillCounterparty
	}
	if t.LinkedID != "" {
		f |= FillLinkedID
	}
	if t.Status != TxnPending {
		f |= FillStatus
	}
	if t.Settlement.Currency != "" {
		f |= FillSettlement
	}
	return f
}

// day is how far apart two sightings' times may be.
const day = 24 * time.Hour

// contradicts reports whether t contradicts st met with status: another
// amount, currency or type, a time more than a day apart, another
// settlement when both have one, or another final status.
func contradicts(st *StoredTxn, status TxnStatus, t *ProviderTxn) bool {
	if st.Account != t.Account || st.Type != t.Type || st.Amount.Currency != t.Amount.Currency || !st.Amount.Value.Equal(t.Amount.Value) {
		return true
	}
	if d := t.OccurredAt.Truncate(time.Microsecond).Sub(st.OccurredAt); d > day || d < -day {
		return true
	}
	if st.Settlement.Currency != "" && t.Settlement.Currency != "" && !st.Settlement.Equal(t.Settlement) {
		return true
	}
	return t.Status != TxnPending && status != TxnPending && t.Status != status
}

// ProbeMode says when a store reads what it holds of a batch's keys (the
// probe) before writing the batch. Stores probe unless the last batch of
// the transaction found none of its keys stored; their tests force either
// way.
type ProbeMode int

const (
	// ProbeUnlessNew probes a batch unless the last batch of its
	// transaction found none of its keys stored.
	ProbeUnlessNew ProbeMode = iota
	// ProbeAlways probes every batch.
	ProbeAlways
	// ProbeNever writes every batch first as if none of its keys were
	// stored, and probes it when that fails.
	ProbeNever
)

// SkipProbe says whether a batch is first written as all new, without its
// probe; lastAllNew says the transaction's last batch found none of its
// keys stored.
func (m ProbeMode) SkipProbe(lastAllNew bool) bool {
	switch m {
	case ProbeAlways:
		return false
	case ProbeNever:
		return true
	}
	return lastAllNew
}
