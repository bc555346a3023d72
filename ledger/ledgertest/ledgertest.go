// Package ledgertest is the conformance suite of the ledger: every engine runs
// Exercise against a real database and must pass the same tests.
package ledgertest

import (
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// NewStore returns a fresh, migrated, empty store for one test.
type NewStore func(testing.TB) ledger.Store

// Exercise runs the whole suite.
func Exercise(t *testing.T, newStore NewStore) {
	t.Run("Intents", func(t *testing.T) { t.Parallel(); exerciseIntents(t, newStore) })
	t.Run("Attempts", func(t *testing.T) { t.Parallel(); exerciseAttempts(t, newStore) })
	t.Run("ProviderTxns", func(t *testing.T) { t.Parallel(); exerciseTxns(t, newStore) })
	t.Run("ProviderTxnBatches", func(t *testing.T) { t.Parallel(); exerciseTxnBatches(t, newStore) })
	t.Run("Runs", func(t *testing.T) { t.Parallel(); exerciseRuns(t, newStore) })
	t.Run("Findings", func(t *testing.T) { t.Parallel(); exerciseFindings(t, newStore) })
	t.Run("FindingsBatch", func(t *testing.T) { t.Parallel(); exerciseFindingsBatch(t, newStore) })
	t.Run("Quarantine", func(t *testing.T) { t.Parallel(); exerciseQuarantine(t, newStore) })
	t.Run("History", func(t *testing.T) { t.Parallel(); exerciseHistory(t, newStore) })
	t.Run("QuarantineHistory", func(t *testing.T) { t.Parallel(); exerciseQuarantineHistory(t, newStore) })
	t.Run("Callbacks", func(t *testing.T) { t.Parallel(); exerciseCallbacks(t, newStore) })
	t.Run("Alerts", func(t *testing.T) { t.Parallel(); exerciseAlerts(t, newStore) })
	t.Run("Events", func(t *testing.T) { t.Parallel(); exerciseEvents(t, newStore) })
	t.Run("ClaimAndFinish", func(t *testing.T) { t.Parallel(); exerciseClaimAndFinish(t, newStore) })
	t.Run("Tx", func(t *testing.T) { t.Parallel(); exerciseTx(t, newStore) })
	t.Run("Scan", func(t *testing.T) { t.Parallel(); exerciseScan(t, newStore) })
	t.Run("ScanAmounts", func(t *testing.T) { t.Parallel(); exerciseScanAmounts(t, newStore) })
	t.Run("Settlement", func(t *testing.T) { t.Parallel(); exerciseSettlement(t, newStore) })
	t.Run("BatchGets", func(t *testing.T) { t.Parallel(); exerciseBatchGets(t, newStore) })
	t.Run("Concurrency", func(t *testing.T) { t.Parallel(); exerciseConcurrency(t, newStore) })
	t.Run("ManualLinks", func(t *testing.T) { t.Parallel(); exerciseManualLinks(t, newStore) })
	t.Run("Refunds", func(t *testing.T) { t.Parallel(); exerciseRefunds(t, newStore) })
	t.Run("Expected", func(t *testing.T) { t.Parallel(); exerciseExpected(t, newStore) })
	t.Run("Lookups", func(t *testing.T) { t.Parallel(); exerciseLookups(t, newStore) })
	t.Run("Unseen", func(t *testing.T) { t.Parallel(); exerciseUnseen(t, newStore) })
	t.Run("PullRegistrations", func(t *testing.T) { t.Parallel(); exercisePullRegistrations(t, newStore) })
	t.Run("Remedies", func(t *testing.T) { t.Parallel(); exerciseRemedies(t, newStore) })
	t.Run("Changes", func(t *testing.T) { t.Parallel(); exerciseChanges(t, newStore) })
	t.Run("Closes", func(t *testing.T) { t.Parallel(); exerciseCloses(t, newStore) })
	t.Run("Payouts", func(t *testing.T) { t.Parallel(); exercisePayouts(t, newStore) })
	t.Run("Accounts", func(t *testing.T) { t.Parallel(); exerciseAccounts(t, newStore) })
}

// T0 is the suite's fixed clock origin.
var T0 = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

func kes(t testing.TB, s string) money.Amount {
	t.Helper()
	a, err := money.Parse(s, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func params(t testing.TB, key, amount string) ledger.IntentParams {
	return ledger.IntentParams{Key: key, Provider: "mpesa", Amount: kes(t, amount), Customer: "254712340845"}
}

// RefNormQueries read every stored reference beside its normal form, for
// StaleRefNorms.
var RefNormQueries = []string{`SELECT reference, ref_norm FROM intents`, `SELECT reference, ref_norm FROM provider_txns`}

// StaleRefNorms counts the rows whose ref_norm is not the normal form of
// their reference (ledger.NormalReference): the writers fill it, none may
// miss it. scan runs each of RefNormQueries and calls fn for each row (norm
// nil for NULL).
func StaleRefNorms(scan func(query string, fn func(ref string, norm *string)) error) (int, error) {
	n := 0
	for _, q := range RefNormQueries {
		err := scan(q, func(ref string, norm *string) {
			if norm == nil || *norm != ledger.NormalReference(ref) {
				n++
			}
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}
