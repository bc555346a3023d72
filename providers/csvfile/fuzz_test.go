package csvfile

import (
	"bytes"
	"encoding/csv"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

var fuzzMappings = []Mapping{bankMapping, providerMapping, semicolonMapping}

// canonical is the layout sightings are rendered in for the round trip:
// every field in its own column, UTC times, amounts as magnitudes with the
// type saying the direction.
func canonical(provider string) Mapping {
	ident := func(vals ...string) map[string]string {
		m := map[string]string{}
		for _, v := range vals {
			m[v] = v
		}
		return m
	}
	return Mapping{Provider: provider, ID: "id", Time: "time", TimeFormat: time.RFC3339Nano, Amount: "amount",
		Currency: "currency", Type: "type", TypeMap: ident("charge", "refund", "reversal", "fee", "payout"),
		Status: "status", StatusMap: ident("succeeded", "failed", "pending"), Reference: "reference", Counterparty: "counterparty"}
}

func render(ss []providers.Sighting) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"id", "time", "amount", "currency", "type", "status", "reference", "counterparty"})
	for _, s := range ss {
		x := s.Txn
		_ = w.Write([]string{x.ID, x.OccurredAt.Format(time.RFC3339Nano), x.Amount.Text(), x.Amount.Currency, string(x.Type),
			string(x.Status), x.Reference, x.Counterparty})
	}
	w.Flush()
	return b.Bytes()
}

func sameTxns(a, b []providers.Sighting) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i].Txn, b[i].Txn
		// Counterparties are masked on the way in; masking is applied again
		// to the rendered (already masked) value.
		if x.ID != y.ID || !sameTxn(ledger.ProviderTxn{Type: x.Type, Status: x.Status, Amount: x.Amount, OccurredAt: x.OccurredAt,
			Reference: x.Reference, Counterparty: ledger.MaskCustomer(x.Counterparty)}, y) {
			return false
		}
	}
	return true
}

// FuzzStatement: no panic; every emitted sighting has a known currency, a
// UTC time and an amount at its currency's scale; every reject names the
// file and a line; and what was emitted survives render -> parse.
func FuzzStatement(f *testing.F) {
	for i, name := range []string{"bank.csv", "provider.csv", "semicolon.csv"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(i))
	}
	f.Add([]byte(bankHeader+"FT1,23/11/2024 14:05,INV-1,-35.00,,Posted,\n"+goodBankRow), uint8(0))
	f.Add([]byte(bankHeader+"FT1,31/11/2024 14:05,\"INV,\"\"1\"\"\",,\"1,000.005\",Booked,2547 ***** 845\r\n"), uint8(0))
	f.Add([]byte("id,created,type,amount,currency,state,reference,customer\np1,2024-11-23T11:00:00.5+03:00,refund,-0,jpy,failed,,94c392c311d522da950619227b3361752a42042db7e1e699b26e628305c68a88\n"), uint8(1))
	f.Add([]byte("Buchungs-ID;Datum;Betrag;Währung;Verwendungszweck\nX;29.02.2024 23:59;1.000.000,0;BHD;\n"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		m := fuzzMappings[int(which)%len(fuzzMappings)]
		got, err := parse(t, m, data, "fuzz.csv")
		for _, r := range got.rejects {
			if r.File != "fuzz.csv" || r.Line < 1 {
				t.Fatalf("reject without a place: %v", r)
			}
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") || len(got.sightings) != 0 {
				t.Fatalf("file error %v after %d sightings", err, len(got.sightings))
			}
			return
		}
		for _, s := range got.sightings {
			checkSighting(t, s)
		}
		again, err := parse(t, canonical(m.Provider), render(got.sightings), "again.csv")
		if err != nil || len(again.rejects) > 0 {
			t.Fatalf("rendered sightings do not parse: %v %v\n%s", err, again.rejects, render(got.sightings))
		}
		if !sameTxns(got.sightings, again.sightings) {
			t.Fatalf("parse -> render -> parse changed the rows:\n%s\nbecame\n%s", render(got.sightings), render(again.sightings))
		}
	})
}
