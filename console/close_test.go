package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestClosePage: the month's close report as the console shows it, the
// close recorded by an operator (refused while days were not run, unless
// forced; never twice; never by a viewer), and a finding raised after the
// close flagged on its page. Pages are golden, on both engines.
func TestClosePage(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setup(t, e.New)
			page := "/console/close?period=2026-11&provider=mpesa"
			p := b.get(t, viewer, page)
			if p.status != http.StatusOK {
				t.Fatalf("close page: %d\n%s", p.status, p.body)
			}
			golden.Assert(t, "testdata/close.html.golden", p.body)
			if p := b.get(t, viewer, "/console/close?period=2026-13"); p.status != http.StatusUnprocessableEntity {
				t.Fatalf("a bad month: %d", p.status)
			}
			form := url.Values{"period": {"2026-11"}, "provider": {"mpesa"}, "note": {"November reviewed"}}
			if p := b.post(t, viewer, "/console/close", form, nil); p.status != http.StatusForbidden {
				t.Fatalf("a viewer's close: %d", p.status)
			}
			if p := b.post(t, ops, "/console/close", form, nil); p.status != http.StatusConflict || !strings.Contains(p.body, "Not closed: mpesa:") {
				t.Fatalf("closing a month not run: %d\n%s", p.status, p.body)
			}
			form.Set("force", "true")
			if p := b.post(t, ops, "/console/close", url.Values{"period": {"2026-11"}, "provider": {"mpesa"}, "force": {"true"}}, nil); p.status != http.StatusUnprocessableEntity {
				t.Fatalf("closing without a note: %d", p.status)
			}
			if p := b.post(t, ops, "/console/close", form, nil); p.status != http.StatusSeeOther || p.loc != page {
				t.Fatalf("close: %d %q\n%s", p.status, p.loc, p.body)
			}
			if p := b.post(t, ops, "/console/close", form, nil); p.status != http.StatusConflict {
				t.Fatalf("closing twice: %d", p.status)
			}
			golden.Assert(t, "testdata/close_closed.html.golden", b.get(t, viewer, page).body)

			// A finding of November seen first after the close.
			kes := b.store
			late := ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{"SKL9LATE01"}), Kind: ledger.KindUnknownCharge,
				Severity: ledger.SeverityMedium, Provider: "mpesa", ProviderTxnIDs: []string{"SKL9LATE01"}, Detail: "charge links to no intent",
				OccurredAt: t0.Add(48 * time.Hour)}
			if _, err := kes.UpsertFinding(ctx, late, 1, t0.Add(6*time.Hour)); err != nil {
				t.Fatal(err)
			}
			p = b.get(t, viewer, "/console/findings/"+late.ID)
			if !strings.Contains(p.body, "Raised after the close of 2026-11 (mpesa), closed by ops@example.com") {
				t.Fatalf("late finding's page:\n%s", p.body)
			}
			if p := b.get(t, viewer, page); !strings.Contains(p.body, "Raised after the month was closed") {
				t.Fatalf("close page after a late finding:\n%s", p.body)
			}
		})
	}
}
