package stripe

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/csvfile"
)

var nairobi = time.FixedZone("EAT", 3*3600)

type parsed struct {
	sightings []providers.Sighting
	rejects   []*ledger.ParseError
	raws      [][]byte
}

func parseReport(t testing.TB, p ReportParser, data []byte, file string) (parsed, error) {
	t.Helper()
	var out parsed
	err := p.ParseStatement(bytes.NewReader(data), file, func(s providers.Sighting) error {
		out.sightings = append(out.sightings, s)
		return nil
	}, func(perr *ledger.ParseError, raw []byte) error {
		out.rejects = append(out.rejects, perr)
		out.raws = append(out.raws, raw)
		return nil
	})
	return out, err
}

func TestReportGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		loc  *time.Location
	}{{"itemized.csv", nil}, {"local_time.csv", nairobi}, {"bom_crlf.csv", nil}} {
		data, err := os.ReadFile("testdata/report/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseReport(t, ReportParser{Location: tc.loc, Clock: fixedClock(T0)}, data, tc.file)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(got.rejects) > 0 {
			t.Fatalf("%s: rejected %v", tc.file, got.rejects)
		}
		for _, s := range got.sightings {
			checkSighting(t, s)
			if s.Source.Channel != ChannelStatement || !strings.HasPrefix(s.Source.Ref, "txn_") || !s.Source.ReceivedAt.Equal(T0) {
				t.Errorf("%s: source %+v", tc.file, s.Source)
			}
		}
		golden.Assert(t, "testdata/report/"+strings.TrimSuffix(tc.file, ".csv")+".golden", renderSightings(got.sightings))
	}
}

func TestReportRawLines(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/report/itemized.csv")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseReport(t, ReportParser{}, data, "itemized.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if raw := string(got.sightings[0].Source.Raw); raw != lines[1] {
		t.Errorf("raw = %q, want line 2 %q", raw, lines[1])
	}
}

func TestReportNeedsAZoneForLocalColumns(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/report/local_time.csv")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseReport(t, ReportParser{}, data, "local_time.csv")
	var perr *ledger.ParseError
	if !errors.As(err, &perr) || perr.Field != "created" || len(got.sightings) != 0 {
		t.Errorf("err = %v, emitted %d; want a created error and nothing", err, len(got.sightings))
	}
}

// reportRows reads the typed rows of a report, the good ones only.
func reportRows(p ReportParser, data []byte) ([]reportRow, error) {
	cr, err := csvfile.NewReader(bytes.NewReader(data), "rows.csv", ',')
	if err != nil {
		return nil, err
	}
	cols, err := p.columns(cr, "rows.csv")
	if err != nil {
		return nil, err
	}
	var rows []reportRow
	for {
		rec, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			continue
		}
		row, perr := p.row(cols, rec, "rows.csv")
		if perr != nil {
			continue
		}
		if _, lerr := row.line().normalize(); lerr != nil {
			continue
		}
		rows = append(rows, row)
	}
}

// renderReport writes rows back as a report with every column, UTC times.
func renderReport(rows []reportRow) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"balance_transaction_id", "created_utc", "charge_created_utc", "currency", "gross", "fee", "net",
		"reporting_category", "source_id", "charge_id", "payment_intent_id", "customer_id", "customer_email",
		"payment_metadata[intent_key]", "customer_facing_amount", "customer_facing_currency"})
	tf := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(reportTimeLayout)
	}
	for _, r := range rows {
		_ = w.Write([]string{r.BalanceTxnID, tf(r.Created), tf(r.ChargeCreated), strings.ToLower(r.Currency), r.Gross.Text(),
			r.Fee.Text(), money.Amount{Value: r.Gross.Value.Sub(r.Fee.Value), Currency: r.Currency}.Text(), r.Category, r.SourceID, r.ChargeID, r.PaymentIntent,
			r.CustomerID, r.CustomerEmail, r.IntentKey, faceAmount(r.Presented), strings.ToLower(r.Presented.Currency)})
	}
	w.Flush()
	return b.Bytes()
}

func faceAmount(a money.Amount) string {
	if a.IsZero() {
		return ""
	}
	return a.Text()
}

func sameRows(a, b []reportRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.BalanceTxnID != y.BalanceTxnID || !x.Created.Equal(y.Created) || !x.ChargeCreated.Equal(y.ChargeCreated) ||
			x.Currency != y.Currency || !x.Gross.Equal(y.Gross) || !x.Fee.Equal(y.Fee) || x.Category != y.Category ||
			x.SourceID != y.SourceID || x.ChargeID != y.ChargeID || x.PaymentIntent != y.PaymentIntent ||
			x.CustomerID != y.CustomerID || x.CustomerEmail != y.CustomerEmail || x.IntentKey != y.IntentKey ||
			!x.Presented.Equal(y.Presented) {
			return false
		}
	}
	return true
}

func TestReportRoundTrip(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/report/itemized.csv")
	if err != nil {
		t.Fatal(err)
	}
	p := ReportParser{}
	rows, err := reportRows(p, data)
	if err != nil || len(rows) != 6 {
		t.Fatalf("rows %d, err %v", len(rows), err)
	}
	again, err := reportRows(p, renderReport(rows))
	if err != nil {
		t.Fatal(err)
	}
	if !sameRows(rows, again) {
		t.Errorf("parse -> render -> parse changed the rows:\n%s", renderReport(again))
	}
}

// TestReportMetadataKey: the intent key is read from the configured
// metadata key's column, and a report naming only another key's column
// lacks a linking column.
func TestReportMetadataKey(t *testing.T) {
	t.Parallel()
	data := []byte("balance_transaction_id,created_utc,currency,gross,fee,reporting_category,charge_id,payment_metadata[order_id]\n" +
		"txn_1,2024-11-23 14:05:06,usd,10.00,0.00,charge,ch_1,order-9\n")
	got, err := parseReport(t, ReportParser{MetadataKey: "order_id"}, data, "k.csv")
	if err != nil || len(got.sightings) != 1 || got.sightings[0].Txn.Reference != "order-9" {
		t.Fatalf("custom key: %+v, %v", got.sightings, err)
	}
	_, err = parseReport(t, ReportParser{}, data, "k.csv")
	if err == nil || !strings.Contains(err.Error(), "payment_metadata[intent_key]") {
		t.Fatalf("default key against a report of another: %v", err)
	}
}
