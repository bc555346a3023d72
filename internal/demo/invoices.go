package demo

import (
	"context"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
	"github.com/reconcilehq/reconcile/reconciler"
)

// invoices shows expected payments: invoices the customers pay by paybill
// account number, when and in as many parts as they choose. One issued two
// days ago, due yesterday, is reconciled (nothing paid: missing) before its
// payment comes today: today's run links the payment, finds nothing to say,
// and resolves the finding of two days ago with the reason. One is paid in
// two parts today (no finding), one short after its due date (underpaid),
// one over (overpaid), and one in part before it is due (partially paid).
func (d *demo) invoices(ctx context.Context) error {
	kes := func(s string) money.Amount { a, _ := money.Parse(s, "KES"); return a }
	issued := Day.AddDate(0, 0, -2).Add(11 * time.Hour)
	invoices := []struct {
		key, ref, amount string
		at, due          time.Time
	}{
		{"mpesa:inv-3001", "INV3001", "2000", issued, Day.AddDate(0, 0, -1)},
		{"mpesa:inv-2001", "INV2001", "1500", Day.Add(9 * time.Hour), Day.AddDate(0, 0, 7)},
		{"mpesa:inv-4001", "INV4001", "3000", Day.Add(8 * time.Hour), Day.Add(14 * time.Hour)},
		{"mpesa:inv-5001", "INV5001", "800", Day.Add(8 * time.Hour), Day.AddDate(0, 0, 7)},
		{"mpesa:inv-6001", "INV6001", "5000", Day.Add(8 * time.Hour), Day.AddDate(0, 0, 14)},
	}
	for _, inv := range invoices {
		if _, _, err := d.opt.Store.CreateIntent(ctx, ledger.NewIntent{State: ledger.StatePending, CreatedAt: inv.at.UTC(),
			IntentParams: ledger.IntentParams{Key: inv.key, Kind: ledger.IntentExpected, Provider: mpesa.Provider, Amount: kes(inv.amount),
				Reference: inv.ref, DueAt: inv.due.UTC(), Customer: "254722000301"}}); err != nil {
			return err
		}
	}
	// The day of the first invoice, reconciled before its payment came.
	from := Day.AddDate(0, 0, -2)
	out, err := d.reconciler().Run(ctx, reconciler.Params{Provider: mpesa.Provider, From: from, To: from.AddDate(0, 0, 1), NoPull: true})
	if err != nil {
		return err
	}
	for _, f := range out.Findings {
		d.say("%s reconciled first: %s %s (%s)", from.Format("2006-01-02"), f.Kind, f.IntentKey, f.Detail)
	}
	pays := []struct {
		ref, amount string
		at          time.Time
	}{
		{"INV3001", "2000.00", Day.Add(11*time.Hour + 20*time.Minute)},
		{"INV2001", "1000.00", Day.Add(10*time.Hour + 5*time.Minute)},
		{"inv 2001", "500.00", Day.Add(12*time.Hour + 40*time.Minute)},
		{"INV4001", "2000.00", Day.Add(9 * time.Hour)},
		{"INV5001", "1000.00", Day.Add(9*time.Hour + 30*time.Minute)},
		{"INV6001", "2000.00", Day.Add(13 * time.Hour)},
	}
	for _, p := range pays {
		if _, _, err := d.mfake.AddC2B(ctx, mpesafake.C2BPayment{Amount: p.amount, BillRef: p.ref, At: p.at,
			MSISDN: "2547****0301", FirstName: "AMINA"}, true); err != nil {
			return err
		}
	}
	d.say("M-Pesa: mpesa:inv-3001 (KES 2,000, issued %s, due yesterday) paid today;", issued.Format("Jan 2"))
	d.say("        mpesa:inv-2001 (KES 1,500) paid 1,000 + 500; mpesa:inv-4001 (KES 3,000, due 14:00) paid 2,000;")
	d.say("        mpesa:inv-5001 (KES 800) paid 1,000; mpesa:inv-6001 (KES 5,000, due in two weeks) paid 2,000 so far")
	return nil
}
