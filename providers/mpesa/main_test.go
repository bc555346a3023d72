package mpesa

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func renderTxn(b *strings.Builder, t ledger.ProviderTxn) {
	fmt.Fprintf(b, "  txn %s %s %s %s %s at %s", t.Provider, t.ID, t.Type, t.Status, t.Amount, t.OccurredAt.Format("2006-01-02T15:04:05Z07:00"))
	for _, f := range []struct{ k, v string }{{"ref", t.Reference}, {"provider_ref", t.ProviderRef},
		{"counterparty", t.Counterparty}, {"linked", t.LinkedID}} {
		if f.v != "" {
			fmt.Fprintf(b, " %s=%q", f.k, f.v)
		}
	}
	b.WriteByte('\n')
}

func renderSighting(b *strings.Builder, s providers.Sighting) {
	renderTxn(b, s.Txn)
	fmt.Fprintf(b, "    source %s %s\n", s.Source.Channel, s.Source.Ref)
}

func renderEvidence(ev providers.Evidence) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  kind %s ack %s\n", ev.Kind, ev.Ack)
	for _, s := range ev.Sightings {
		renderSighting(&b, s)
	}
	for _, o := range ev.Outcomes {
		fmt.Fprintf(&b, "  outcome %s %s code=%q reason=%q", o.ProviderRef, o.Status, o.Code, o.Reason)
		if o.TxnID != "" {
			fmt.Fprintf(&b, " txn=%s amount=%s", o.TxnID, o.Amount)
		}
		fmt.Fprintf(&b, " at=%s\n", o.At.Format("2006-01-02T15:04:05Z07:00"))
	}
	return b.String()
}
