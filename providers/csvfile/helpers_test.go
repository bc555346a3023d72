package csvfile

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/providertest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var T0 = time.Date(2024, time.November, 25, 6, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return T0 }

// The mappings of the fixtures.
var (
	bankMapping = Mapping{Provider: "equity-bank", ID: "Transaction Ref", Time: "Value Date", TimeFormat: "02/01/2006 15:04",
		Zone: "Africa/Nairobi", Debit: "Debit", Credit: "Credit", ThousandsSeparator: ",", FixedCurrency: "KES",
		Status: "Status", StatusMap: map[string]string{"posted": "succeeded", "pending": "pending", "reversed": "failed"},
		Reference: "Narrative", Counterparty: "Payer", OutType: "payout"}
	providerMapping = Mapping{Provider: "acme-pay", ID: "id", Time: "created", TimeFormat: time.RFC3339, Amount: "amount",
		Currency: "currency", Type: "type", TypeMap: map[string]string{"Payment": "charge", "Refund": "refund"},
		Status: "state", StatusMap: map[string]string{"success": "succeeded", "failed": "failed"}, Reference: "reference",
		Counterparty: "customer"}
	semicolonMapping = Mapping{Provider: "sparkasse", Delimiter: ";", ID: "Buchungs-ID", Time: "Datum",
		TimeFormat: "02.01.2006 15:04", Zone: "Europe/Berlin", Amount: "Betrag", ThousandsSeparator: ".",
		DecimalSeparator: ",", Currency: "Währung", Reference: "Verwendungszweck"}
)

type parsed struct {
	sightings []providers.Sighting
	rejects   []*ledger.ParseError
	raws      [][]byte
}

func parse(t testing.TB, m Mapping, data []byte, file string) (parsed, error) {
	t.Helper()
	p, err := NewParser(m, fixedClock)
	if err != nil {
		t.Fatalf("mapping: %v", err)
	}
	var out parsed
	err = p.ParseStatement(bytes.NewReader(data), file, func(s providers.Sighting) error {
		out.sightings = append(out.sightings, s)
		return nil
	}, func(perr *ledger.ParseError, raw []byte) error {
		out.rejects = append(out.rejects, perr)
		out.raws = append(out.raws, raw)
		return nil
	})
	return out, err
}

func renderSightings(ss []providers.Sighting) string {
	var b strings.Builder
	for _, s := range ss {
		x := s.Txn
		fmt.Fprintf(&b, "%s %s %s %s %s %s at=%s", x.Provider, x.Type, x.ID, x.Status, x.Amount.Currency, x.Amount.Text(),
			x.OccurredAt.Format(time.RFC3339))
		for _, kv := range [][2]string{{"ref", x.Reference}, {"cp", x.Counterparty}} {
			if kv[1] != "" {
				fmt.Fprintf(&b, " %s=%q", kv[0], kv[1])
			}
		}
		fmt.Fprintf(&b, " src=%s:%s raw=%q\n", s.Source.Channel, s.Source.Ref, s.Source.Raw)
	}
	return b.String()
}

// checkSighting asserts what every sighting must have (providertest) and
// that its source is the statement line, received at the test's clock.
func checkSighting(t testing.TB, s providers.Sighting) {
	t.Helper()
	providertest.CheckSighting(t, s)
	if s.Source.Channel != ChannelStatement || s.Source.Ref != s.Txn.ID || !s.Source.ReceivedAt.Equal(T0) {
		t.Fatalf("source %+v", s.Source)
	}
}
