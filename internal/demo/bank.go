package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
	"github.com/reconcilehq/reconcile/providers/statement"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/report"
)

// The last step follows Stripe's money to the bank. The week before the
// demonstrated day, Stripe paid its balance out to the company's USD
// account; the bank's MT940 statement of that week is imported and the
// account's week reconciled against the payouts, pulled from Stripe with
// what each carries. One payout arrived short, one twice, one never; one
// carries a charge the books never saw; a charge of the week before was
// never paid out; and a wire came in that nobody explains.

// bankAccount is the demo's USD account, the provider bank:demo-usd.
func bankAccount(clock func() time.Time) *bankaccount.Account {
	ny, _ := time.LoadLocation("America/New_York")
	return &bankaccount.Account{Name: "demo-usd", Number: "4401234567", Currency: "USD", Zone: ny, Format: bankaccount.FormatMT940,
		Clock: clock, Sources: []bankaccount.Source{{Provider: "stripe", Descriptor: regexp.MustCompile(`(?i)STRIPE`),
			PayoutDays: bankaccount.DefaultPayoutDays}}}
}

// bankWeek is the Monday of the week the bank statement covers.
var bankWeek = time.Date(2026, 10, 26, 0, 0, 0, 0, time.UTC)

// bankLine is one line of the demo's bank statement.
type bankLine struct {
	day    int // days after bankWeek
	cents  int64
	ref    string // the payer's reference (a payout id), "" for none
	bank   string
	text   string
	credit bool
}

// bank shows a bank account's week: Stripe's payouts, the statement that
// should carry them, and what reconciling the account finds.
func (d *demo) bank(ctx context.Context) error {
	net, err := d.stripePayouts()
	if err != nil {
		return err
	}
	// The charges of those days are in the books (pulled as any day is),
	// but for the one of two weeks ago.
	if err := d.pullInto(ctx, bankWeek.AddDate(0, 0, -5), bankWeek.AddDate(0, 0, 7)); err != nil {
		return err
	}
	lines := []bankLine{
		{0, 2500, "", "0326FEE000004", "MONTHLY SERVICE FEE", false},
		{1, net["po_demo01ok"], "po_demo01ok", "1027ACH000118", "STRIPE PAYOUT po_demo01ok STRIPE", true},
		{2, net["po_demo02sh"] - 2500, "po_demo02sh", "1028ACH000097", "STRIPE PAYOUT po_demo02sh STRIPE", true},
		{2, 750000, "", "1028WIR000017", "INCOMING WIRE ACME GLOBAL REF 20261028-A77", true},
		{3, net["po_demo03tw"], "po_demo03tw", "1029ACH000142", "STRIPE PAYOUT po_demo03tw STRIPE", true},
		{4, net["po_demo03tw"], "po_demo03tw", "1030ACH000088", "STRIPE PAYOUT po_demo03tw STRIPE", true},
		{4, net["po_demo05cm"], "po_demo05cm", "1030ACH000131", "STRIPE PAYOUT po_demo05cm STRIPE", true},
	}
	acct, err := d.importBankStatement(ctx, lines)
	if err != nil {
		return err
	}
	return d.reconcileBank(ctx, acct)
}

// stripePayouts adds the week's charges and payouts to the Stripe fake and
// returns each payout's net amount by id: one paid as expected, one short,
// one twice, one missing, one carrying a charge the books never saw.
func (d *demo) stripePayouts() (map[string]int64, error) {
	f := d.sfake
	at := func(day, hour int) time.Time { return bankWeek.AddDate(0, 0, day).Add(time.Duration(hour) * time.Hour) }
	charge := func(day, hour int, cents int64) stripefake.Charge {
		return f.AddCharge(stripefake.Charge{Amount: cents, Currency: "usd", Created: at(day, hour), Customer: "cus_demo"})
	}
	btxns := func(cs ...stripefake.Charge) []string {
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.BalanceTxn)
		}
		return ids
	}
	// A charge of the week before, pulled, never paid out; and one of two
	// weeks before, which the books never saw.
	charge(-3, 15, 4500)
	unseen := charge(-7, 11, 12000)
	type payout struct {
		id      string
		arrival int
		charges []stripefake.Charge
	}
	payouts := []payout{
		{"po_demo01ok", 1, []stripefake.Charge{charge(-2, 10, 30000), charge(-1, 16, 12500)}},
		{"po_demo02sh", 2, []stripefake.Charge{charge(-1, 9, 52000)}},
		{"po_demo03tw", 3, []stripefake.Charge{charge(0, 14, 18000)}},
		{"po_demo04ms", 1, []stripefake.Charge{charge(-2, 13, 7000)}},
		{"po_demo05cm", 4, []stripefake.Charge{charge(1, 12, 9900), unseen}},
	}
	net := map[string]int64{}
	for _, p := range payouts {
		po, err := f.AddPayout(stripefake.PayoutSpec{ID: p.id, Created: at(p.arrival-1, 2), ArrivalDate: bankWeek.AddDate(0, 0, p.arrival),
			Descriptor: "STRIPE", Destination: "ba_demo4401", BalanceTxns: btxns(p.charges...)})
		if err != nil {
			return nil, err
		}
		net[p.id] = po.Amount
	}
	return net, nil
}

// importBankStatement writes lines as an MT940 statement and imports it into
// the demo's bank account, which it returns.
func (d *demo) importBankStatement(ctx context.Context, lines []bankLine) (*bankaccount.Account, error) {
	path := filepath.Join(d.opt.TempDir, "bank-statement-2026-10-26.sta")
	if err := os.WriteFile(path, []byte(mt940(lines)), 0o600); err != nil {
		return nil, err
	}
	acct := bankAccount(d.clk.now)
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	c, err := (&statement.Importer{Store: d.opt.Store, Clock: d.clk.now}).Import(ctx, statement.File{Name: path, Reader: fh,
		Parser: acct, Source: acct.Provider() + "_statement"})
	if err != nil {
		return nil, err
	}
	d.say("%s: %d lines of %s (MT940), balances checked", filepath.Base(path), c.Lines, acct.Provider())
	return acct, nil
}

// reconcileBank reconciles the bank account's week and prints the run's
// report and what Slack would say.
func (d *demo) reconcileBank(ctx context.Context, acct *bankaccount.Account) error {
	rec := reconciler.New(d.opt.Store, reconciler.Config{Clock: d.clk.now, Logger: d.opt.Logger,
		Banks: map[string]*bankaccount.Account{acct.Provider(): acct}, PayoutPullers: map[string]providers.PayoutPuller{"stripe": d.stripe}})
	from := time.Date(bankWeek.Year(), bankWeek.Month(), bankWeek.Day(), 0, 0, 0, 0, acct.Zone)
	out, err := rec.Run(ctx, reconciler.Params{Provider: acct.Provider(), From: from, To: from.AddDate(0, 0, 7)})
	if err != nil {
		return err
	}
	d.outcomes[acct.Provider()] = out
	fmt.Fprintln(d.opt.Out)
	r := report.FromOutcome(out)
	r.Zone = acct.Zone
	if err := report.WriteRun(d.opt.Out, report.Text, r); err != nil {
		return err
	}
	cfg := alerts.Config{Mode: alerts.ModeWebhook, Channel: "finance-ops", Zones: map[string]*time.Location{acct.Provider(): acct.Zone},
		Webhooks: map[string]string{"finance-ops": "https://hooks.slack.com/services/demo"}}
	fmt.Fprintf(d.opt.Out, "\n  Slack would say (text fallback; `reconcile alerts preview --run %d` shows the Block Kit):\n", out.Run.ID)
	return alerts.PreviewText(d.opt.Out, cfg, out.Run, out.Findings)
}

// pullInto records what Stripe's API shows of [from, to): the charges the
// books hold before their payouts are reconciled.
func (d *demo) pullInto(ctx context.Context, from, to time.Time) error {
	var batch []ledger.Sighting
	err := d.stripe.Pull(ctx, from, to, func(s providers.Sighting) error {
		batch = append(batch, ledger.Sighting{Txn: s.Txn, Source: s.Source})
		return nil
	})
	if err != nil {
		return err
	}
	_, err = d.opt.Store.UpsertProviderTxns(ctx, batch)
	return err
}

// mt940 writes the lines as daily MT940 statements of the demo account,
// opening at USD 84,213.20.
func mt940(lines []bankLine) string {
	var b strings.Builder
	bal := int64(8421320)
	amt := func(c int64) string { return fmt.Sprintf("%d,%02d", c/100, c%100) }
	for day := 0; day < 5; day++ {
		d := bankWeek.AddDate(0, 0, day).Format("060102")
		fmt.Fprintf(&b, ":20:STMT%s\n:25:4401234567\n:28C:%d/1\n:60F:C%sUSD%s\n", d, 301+day, d, amt(bal))
		for _, l := range lines {
			if l.day != day {
				continue
			}
			mark, code := "D", "NCHG"
			if l.credit {
				mark, code = "C", "NTRF"
				bal += l.cents
			} else {
				bal -= l.cents
			}
			ref := l.ref
			if ref == "" {
				ref = "NONREF"
			}
			fmt.Fprintf(&b, ":61:%s%s%sS%s%s%s//%s\n:86:%s\n", d, d[2:], mark, amt(l.cents), code, ref, l.bank, l.text)
		}
		fmt.Fprintf(&b, ":62F:C%sUSD%s\n-\n", d, amt(bal))
	}
	return b.String()
}
