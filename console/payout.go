package console

import (
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

// A bank account's finding (provider bank:<name>) is about payouts and the
// account's lines: its page shows each payout it names with what it
// carries in the books, the charges it names, and the account's lines with
// their entries (templates/payout.html).

// payoutPage is what the payout section of a finding's page shows.
type payoutPage struct {
	Payouts []payoutOf
	Charges []ledger.ProviderTxn
	Lines   []bankLine
}

type payoutOf struct {
	Ref         string
	Amount      string
	Status      string
	Initiated   time.Time
	Arrival     string
	TraceID     string
	Descriptor  string
	Destination string
	Swept       bool
	Carried     string
	Left        string
	Items       []payoutItem
	More        int
}

type payoutItem struct {
	TxnID  string
	InBook bool
	Type   string
	Status string
	Amount string
}

type bankLine struct {
	ID, Type, Status, Amount     string
	Booked, Value                string
	Reversal                     bool
	BankRef, EndToEnd, Reference string
	Counterparty, Text, Stmt     string
}

func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format("2006-01-02")
}

// viewPayout is the payout section of d, nil when it has none.
func viewPayout(d *findings.PayoutDetail) *payoutPage {
	if d == nil {
		return nil
	}
	p := &payoutPage{Charges: d.Charges}
	for _, po := range d.Payouts {
		v := payoutOf{Ref: ledger.PayoutRef(po.Payout.Provider, po.Payout.ID), Amount: "known from a report's rows only",
			Initiated: po.Payout.InitiatedAt, Arrival: day(po.Payout.ArrivalAt), TraceID: po.Payout.TraceID,
			Descriptor: po.Payout.Descriptor, Destination: po.Payout.Destination, More: po.More}
		if t := po.Txn; t != nil {
			v.Amount, v.Status = t.Amount.String(), string(t.Status)
		}
		if !po.Payout.Carried.IsZero() || !po.Payout.Left.IsZero() {
			v.Swept, v.Carried, v.Left = true, po.Payout.Carried.String(), po.Payout.Left.String()
		}
		for _, it := range po.Items {
			iv := payoutItem{TxnID: it.TxnID}
			if t := it.Txn; t != nil {
				iv.InBook, iv.Type, iv.Status, iv.Amount = true, string(t.Type), string(t.Status), t.Amount.String()
			}
			v.Items = append(v.Items, iv)
		}
		p.Payouts = append(p.Payouts, v)
	}
	for _, l := range d.Lines {
		v := bankLine{ID: l.Txn.ID, Type: string(l.Txn.Type), Status: string(l.Txn.Status), Amount: l.Txn.Amount.String(),
			Reference: l.Txn.Reference, Counterparty: l.Txn.Counterparty, Booked: "-", Value: "-"}
		if e := l.Entry; e != nil {
			v.Booked, v.Value, v.Reversal = day(e.BookingDate), day(e.ValueDate), e.Reversal
			v.BankRef, v.EndToEnd, v.Text, v.Stmt = e.BankRef, e.EndToEndID, e.Text, e.Statement
		}
		p.Lines = append(p.Lines, v)
	}
	return p
}
