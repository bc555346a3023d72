package reconciler_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/reconciler"
)

// TestTwoShortCodesInOneDay: a business with two paybills reconciles the
// same day once per paybill. Each run reads, pulls, judges and resolves
// its own account's books only, so a payment into the branch's paybill
// that names an invoice of the main one links to nothing (it is the
// branch's unknown charge, and the invoice stays missing in the main
// account), and each account's findings stay its own, on both engines.
func TestTwoShortCodesInOneDay(t *testing.T) {
	t.Parallel()
	const branch = "600639"
	eat := time.FixedZone("EAT", 3*3600)
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			d := newDaily(t, e.New, "mpesa", eat, time.Date(2026, 3, 12, 0, 0, 0, 0, eat))
			charge := func(id, amount, ref, account string) ledger.ProviderTxn {
				return ledger.ProviderTxn{ID: id, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kesAmount(t, amount),
					Reference: ref, Account: account}
			}
			// The main paybill: one invoice paid, one not.
			d.intent(ledger.IntentParams{Key: "inv:A1", Amount: kesAmount(t, "1500"), Reference: "INVA1"}, ledger.StateSucceeded, "2026-03-12 09:00")
			d.intent(ledger.IntentParams{Key: "inv:A2", Amount: kesAmount(t, "700"), Reference: "INVA2"}, ledger.StateSucceeded, "2026-03-12 09:05")
			d.txn(charge("SCA0000001", "1500", "INVA1", ""), "2026-03-12 10:00")
			// The branch: one invoice paid by statement, one by its pull;
			// one payment nobody expected, and one naming the main
			// paybill's unpaid invoice.
			d.intent(ledger.IntentParams{Key: "inv:B1", Amount: kesAmount(t, "900"), Reference: "INVB1", Account: branch},
				ledger.StateSucceeded, "2026-03-12 09:10")
			d.intent(ledger.IntentParams{Key: "inv:B2", Amount: kesAmount(t, "400"), Reference: "INVB2", Account: branch},
				ledger.StateSucceeded, "2026-03-12 09:15")
			d.txn(charge("SCB0000001", "900", "INVB1", branch), "2026-03-12 11:00")
			d.txn(charge("SCB0000002", "300", "WALKIN", branch), "2026-03-12 12:00")
			d.txn(charge("SCB0000003", "700", "INVA2", branch), "2026-03-12 13:00")
			pulled := charge("SCB0000004", "400", "INVB2", "")
			pulled.Provider, pulled.OccurredAt = "mpesa", d.at("2026-03-12 14:00")
			mainPull, branchPull := &puller{}, &puller{sightings: []providers.Sighting{{Txn: pulled,
				Source: ledger.Source{Channel: "pull", Ref: "pull:SCB0000004", ReceivedAt: pulled.OccurredAt}}}}
			rec := reconciler.New(d.store, reconciler.Config{Clock: d.clock.Now, Owner: "test",
				Grace: map[string]time.Duration{"mpesa": 30 * time.Minute}, Zones: map[string]*time.Location{"mpesa": eat},
				Pullers: map[string]providers.Puller{"mpesa": mainPull, ledger.Scope("mpesa", branch): branchPull}})
			from := time.Date(2026, 3, 12, 0, 0, 0, 0, eat)
			d.clock.Add(from.AddDate(0, 0, 1).Add(time.Hour).Sub(d.clock.Now()))
			run := func(account string) *reconciler.Outcome {
				t.Helper()
				out, err := rec.Run(context.Background(), reconciler.Params{Provider: "mpesa", Account: account, From: from,
					To: from.AddDate(0, 0, 1)})
				if err != nil {
					t.Fatal(err)
				}
				if out.Run.Account != account || out.Run.Key != ledger.AccountRunKey("mpesa", account, from, from.AddDate(0, 0, 1)) {
					t.Fatalf("run of account %q: %+v", account, out.Run)
				}
				return out
			}
			mainOut := run("")
			branchOut := run(branch)
			if mainPull.calledWith != 1 || branchPull.calledWith != 1 {
				t.Fatalf("pulls: main %d, branch %d; want one each", mainPull.calledWith, branchPull.calledWith)
			}
			if mainOut.Run.ID == branchOut.Run.ID {
				t.Fatalf("both accounts recorded run %d", mainOut.Run.ID)
			}
			wantMain := []string{"missing_at_provider inv:A2 []"}
			wantBranch := []string{"unknown_charge  [SCB0000002]", "unknown_charge  [SCB0000003]"}
			if got := describe(mainOut.Findings); !slices.Equal(got, wantMain) {
				t.Errorf("main paybill's run found %q, want %q", got, wantMain)
			}
			if got := describe(branchOut.Findings); !slices.Equal(got, wantBranch) {
				t.Errorf("branch's run found %q, want %q", got, wantBranch)
			}
			if got, err := d.store.GetProviderTxn(context.Background(), "mpesa", "SCB0000004"); err != nil || got.Account != branch {
				t.Fatalf("the branch's pulled payment is in account %q (%v)", got.Account, err)
			}
			// The books keep them apart, and a run of one account again
			// resolves none of the other's.
			d.clock.Add(time.Minute)
			if out := run(""); len(out.Resolved) != 0 || !slices.Equal(describe(out.Findings), wantMain) {
				t.Fatalf("main paybill again: findings %q, resolved %d", describe(out.Findings), len(out.Resolved))
			}
			for account, want := range map[string][]string{"": wantMain, branch: wantBranch} {
				fs, err := d.store.ListFindings(context.Background(), ledger.FindingFilter{Provider: "mpesa", Accounts: []string{account},
					Statuses: []ledger.FindingStatus{ledger.FindingOpen}})
				if err != nil {
					t.Fatal(err)
				}
				if got := describe(fs); !slices.Equal(got, want) {
					t.Errorf("open findings of account %q: %q, want %q", account, got, want)
				}
				for _, f := range fs {
					if f.Account != account {
						t.Errorf("finding %s of account %q listed under %q", f.ID, f.Account, account)
					}
				}
			}
		})
	}
}

// describe lists findings as "kind intent [txns]", sorted.
func describe(fs []ledger.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %v", f.Kind, f.IntentKey, f.ProviderTxnIDs))
	}
	slices.Sort(out)
	return out
}
