package ledger

import (
	"context"
	"time"
)

// LookupStore finds the few intents and provider transactions of other
// windows that a reconcile's leftovers may belong to: evidence that named
// no intent of its window, intents that found no evidence there. Every
// look-up is by index (a key, a normal reference, a provider reference, the
// transaction a refund or dispute names), never a scan of the books.
type LookupStore interface {
	// FindIntents returns, once each and in no particular order, the
	// intents of l.Provider that match any of l's lists, with their
	// provider references (ProviderRefs, sorted). Keys match whatever the
	// intent's age; the other lists only intents created in [From, To).
	FindIntents(ctx context.Context, l IntentLookup) ([]Intent, error)
	// FindTxns returns, once each and in no particular order, the provider
	// transactions of l.Provider that match any of l's lists, without
	// their sources. IDs match whatever the transaction's age; the other
	// lists only transactions that occurred in [From, To).
	FindTxns(ctx context.Context, l TxnLookup) ([]ProviderTxn, error)
	// FindManualLinks returns the manual links of provider whose
	// transaction is among txnIDs or whose intent is among intentKeys.
	FindManualLinks(ctx context.Context, provider string, txnIDs, intentKeys []string) ([]ManualLink, error)
}

// IntentLookup selects intents of one provider (LookupStore.FindIntents).
type IntentLookup struct {
	Provider string
	// Account is the provider account the intents belong to.
	Account string
	// From and To bound the creation time of the intents found by
	// anything but their key.
	From, To time.Time
	// Keys are intent keys.
	Keys []string
	// RefNorms are references in normal form (NormalReference); empty ones
	// match nothing.
	RefNorms []string
	// ProviderRefs are provider references an attempt of the intent
	// recorded.
	ProviderRefs []string
	// RefundOf are keys of charge intents whose refund intents are wanted.
	RefundOf []string
}

// TxnLookup selects provider transactions of one provider
// (LookupStore.FindTxns).
type TxnLookup struct {
	Provider string
	// Account is the provider account the transactions belong to.
	Account string
	// From and To bound the occurrence time of the transactions found by
	// anything but their id.
	From, To time.Time
	// IDs are transaction ids.
	IDs []string
	// ProviderRefs are provider references of the request that caused the
	// transaction.
	ProviderRefs []string
	// RefNorms are echoed references in normal form; empty ones match
	// nothing.
	RefNorms []string
	// Linked are ids of the transactions that refunds, reversals, fees and
	// disputes name (their LinkedID).
	Linked []string
}

// Empty reports whether l asks for nothing.
func (l IntentLookup) Empty() bool {
	return len(l.Keys)+len(l.RefNorms)+len(l.ProviderRefs)+len(l.RefundOf) == 0
}

// Empty reports whether l asks for nothing.
func (l TxnLookup) Empty() bool {
	return len(l.IDs)+len(l.ProviderRefs)+len(l.RefNorms)+len(l.Linked) == 0
}

// RefAttacher adds to intents the provider references a store reads for
// them, as (key, reference) pairs, in the order read.
type RefAttacher struct {
	ins []Intent
	at  map[string]int
}

// NewRefAttacher indexes ins by key; Keys lists them.
func NewRefAttacher(ins []Intent) *RefAttacher {
	a := &RefAttacher{ins: ins, at: make(map[string]int, len(ins))}
	for i, in := range ins {
		a.at[in.Key] = i
	}
	return a
}

// Keys returns the keys of the intents, in their order.
func (a *RefAttacher) Keys() []string {
	keys := make([]string, len(a.ins))
	for i, in := range a.ins {
		keys[i] = in.Key
	}
	return keys
}

// Add gives the intent keyed key the provider reference ref; a key not
// among the intents is ignored.
func (a *RefAttacher) Add(key, ref string) {
	if i, ok := a.at[key]; ok {
		a.ins[i].ProviderRefs = append(a.ins[i].ProviderRefs, ref)
	}
}
