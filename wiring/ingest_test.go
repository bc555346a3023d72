package wiring_test

import (
	"errors"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/wiring"
)

// TestImporters: the importers write the parts' books with their clock;
// an intents row's kind defaults to its provider's, and only an import
// that charges has the queued charge service.
func TestImporters(t *testing.T) {
	t.Parallel()
	p, err := setup(t, dbtest.SQLiteURL(t), wiring.Create)
	if err != nil {
		t.Fatal(err)
	}
	im := p.IntentsImporter(false, nil)
	if im.Store != p.Store || im.Charges != nil || im.Clock == nil || !im.Clock().Equal(t0) {
		t.Errorf("intents importer without --charge: %+v", im)
	}
	if kind, ok := im.Kinds["mpesa"]; !ok || kind != p.Providers["mpesa"].IntentKind {
		t.Errorf("mpesa's intent kind: %q (%v), want %q", kind, ok, p.Providers["mpesa"].IntentKind)
	}
	if im.ChargerSetting == nil || im.RefunderSetting == nil {
		t.Error("the importer cannot name the settings a charge or a refund needs")
	}
	if p.IntentsImporter(true, nil).Charges == nil {
		t.Error("intents importer with --charge charges nothing")
	}
	setup := p.Providers["mpesa"]
	st := p.StatementImporter("mpesa", "600111", setup, nil)
	if st.Store != p.Store || st.Provider != "mpesa" || st.Account != "600111" || st.Parser == nil {
		t.Errorf("statement importer: %+v", st)
	}
	cb := p.CallbacksImporter("mpesa", setup, nil)
	if cb.Processor == nil || cb.Provider != "mpesa" || cb.Parser == nil {
		t.Errorf("callbacks importer: %+v", cb)
	}
}

// TestReplayKept: a kept callback body is replayed through the intake and
// recorded replayed by who; an item that does not exist is not found.
func TestReplayKept(t *testing.T) {
	t.Parallel()
	url := dbtest.SQLiteURL(t)
	sd := fixture.Books(t, url)
	p, err := setup(t, url, wiring.Existing)
	if err != nil {
		t.Fatal(err)
	}
	who := ledger.Actor{Name: "alice", Surface: ledger.SurfaceCLI}
	if _, _, err := p.ReplayKept(t.Context(), 999, who, ""); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("an item that does not exist: %v", err)
	}
	q, _, err := p.ReplayKept(t.Context(), sd.Kept, who, "fixed")
	if err != nil || q.ID != sd.Kept || q.Status != ledger.QuarantineReplayed {
		t.Errorf("replayed: %+v (%v)", q, err)
	}
}
