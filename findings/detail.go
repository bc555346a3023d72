package findings

import (
	"context"
	"errors"

	"github.com/reconcilehq/reconcile/ledger"
)

// DetailReader is what a finding's detail reads: the finding, its intent
// with attempts, its transactions with their sources, its history and the
// manual link of its transaction. A ledger.Store has it.
type DetailReader interface {
	GetFinding(ctx context.Context, id string) (ledger.Finding, error)
	GetIntent(ctx context.Context, key string) (ledger.Intent, error)
	ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error)
	GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error)
	FindingHistory(ctx context.Context, id string) ([]ledger.HistoryEvent, error)
	GetManualLink(ctx context.Context, provider, txnID string) (ledger.ManualLink, error)
	// The remedies people asked for, and the wait of a refund one created.
	ListRemedies(ctx context.Context, f ledger.RemedyFilter) ([]ledger.Remedy, error)
	GetRefundWait(ctx context.Context, intentKey string) (ledger.RefundWait, error)
}

// Detail is a finding with its evidence and history, as read from the
// books: what the command line, the console and the API show of one
// finding.
type Detail struct {
	Finding ledger.Finding
	// Intent is the finding's intent, nil when it names none or the books
	// do not hold it; Attempts are its attempts.
	Intent   *ledger.Intent
	Attempts []ledger.Attempt
	// Txns are the provider transactions the finding names that the books
	// hold, by id.
	Txns []ledger.ProviderTxn
	// History is the finding's history, oldest first.
	History []ledger.HistoryEvent
	// Link is the manual link of an unknown_charge's transaction, when a
	// person made one.
	Link *ledger.ManualLink
	// Remedies are the refunds, write-offs, retries and cancels people
	// asked for, oldest first, each with the refund it created.
	Remedies []Remedied
	// Payout is what a bank account's finding names: its payouts with what
	// they carry, and the account's lines (payout.go); nil for the others.
	Payout *PayoutDetail
}

// Remedied is a remedy with the refund intent it created (nil for none, or
// not in the books) and what that refund waits for, if it waits.
type Remedied struct {
	ledger.Remedy
	Refund *ledger.Intent
	Wait   *ledger.RefundWait
}

// Load reads the detail of finding id; an error wrapping ledger.ErrNotFound
// when there is no such finding.
func Load(ctx context.Context, r DetailReader, id string) (Detail, error) {
	f, err := r.GetFinding(ctx, id)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{Finding: f}
	if f.IntentKey != "" {
		in, err := r.GetIntent(ctx, f.IntentKey)
		switch {
		case err == nil:
			if d.Attempts, err = r.ListAttempts(ctx, f.IntentKey); err != nil {
				return Detail{}, err
			}
			d.Intent = &in
		case !errors.Is(err, ledger.ErrNotFound):
			return Detail{}, err
		}
	}
	txns, err := r.GetProviderTxns(ctx, f.Provider, f.ProviderTxnIDs)
	if err != nil {
		return Detail{}, err
	}
	byID := make(map[string]ledger.ProviderTxn, len(txns))
	for _, t := range txns {
		byID[t.ID] = t
	}
	for _, tid := range ledger.SortedIDs(f.ProviderTxnIDs) {
		if t, ok := byID[tid]; ok {
			d.Txns = append(d.Txns, t)
		}
	}
	if d.History, err = r.FindingHistory(ctx, id); err != nil {
		return Detail{}, err
	}
	if pr, ok := r.(PayoutReader); ok && ledger.IsBankProvider(f.Provider) {
		if d.Payout, err = LoadPayout(ctx, pr, f); err != nil {
			return Detail{}, err
		}
	}
	if f.Kind == ledger.KindUnknownCharge && len(f.ProviderTxnIDs) == 1 {
		l, err := r.GetManualLink(ctx, f.Provider, f.ProviderTxnIDs[0])
		switch {
		case err == nil:
			d.Link = &l
		case !errors.Is(err, ledger.ErrNotFound):
			return Detail{}, err
		}
	}
	if d.Remedies, err = loadRemedies(ctx, r, id); err != nil {
		return Detail{}, err
	}
	return d, nil
}

// loadRemedies reads the remedies of finding id with their refunds.
func loadRemedies(ctx context.Context, r DetailReader, id string) ([]Remedied, error) {
	rs, err := r.ListRemedies(ctx, ledger.RemedyFilter{FindingIDs: []string{id}})
	if err != nil {
		return nil, err
	}
	out := make([]Remedied, 0, len(rs))
	for _, x := range rs {
		m := Remedied{Remedy: x}
		if x.RefundKey != "" {
			in, err := r.GetIntent(ctx, x.RefundKey)
			switch {
			case err == nil:
				m.Refund = &in
			case !errors.Is(err, ledger.ErrNotFound):
				return nil, err
			}
			w, err := r.GetRefundWait(ctx, x.RefundKey)
			switch {
			case err == nil:
				m.Wait = &w
			case !errors.Is(err, ledger.ErrNotFound):
				return nil, err
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// View is the JSON shape of d.
func (d Detail) View() DetailView {
	v := DetailView{Finding: ViewFinding(d.Finding), Transactions: make([]TxnView, 0, len(d.Txns)), History: ViewHistory(d.History)}
	if d.Intent != nil {
		iv := ViewIntent(*d.Intent, d.Attempts)
		v.Intent = &iv
	}
	for _, t := range d.Txns {
		v.Transactions = append(v.Transactions, ViewTxn(t))
	}
	for _, m := range d.Remedies {
		v.Remedies = append(v.Remedies, ViewRemedy(m))
	}
	v.Payout = d.Payout.View()
	return v
}
