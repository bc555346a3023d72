package stripe

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// seedReports returns the report fixtures and the catalogue's bad files.
func seedReports(f *testing.F) {
	paths, _ := filepath.Glob("testdata/report/*.csv")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(reportHeader + goodReportRow))
	f.Add([]byte(reportHeader + "txn_1,2024-11-23 14:05:06,usd,10.005,0.00,,charge,ch_1,ch_1,\n"))
	f.Add([]byte(reportHeader + "txn_1,2024-11-23 14:05:06,jpy,-1500,0,-1500,refund,re_1,ch_1,k\n"))
	f.Add([]byte(reportHeader + "txn_1,2024-11-23 14:05:06,isk,\"1,000\",0,,dispute,du_1,ch_1,\n"))
	f.Add([]byte("\ufeff" + reportHeader + "\"txn_\"\"1\",2024-11-23 14:05:06,kwd,1.234,0.001,1.233,charge,ch_1,,\r\n"))
}

// FuzzReportCSV: no panic; every emitted sighting has a known currency, a
// UTC time and an amount at its currency's scale; every reject names the
// file and a line; and the rows that parse survive parse -> render -> parse.
func FuzzReportCSV(f *testing.F) {
	seedReports(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := ReportParser{Location: nairobi, Clock: fixedClock(T0)}
		err := p.ParseStatement(bytes.NewReader(data), "fuzz.csv", func(s providers.Sighting) error {
			checkSighting(t, s)
			return nil
		}, func(perr *ledger.ParseError, raw []byte) error {
			if perr.File != "fuzz.csv" || perr.Line < 1 {
				t.Fatalf("reject without a place: %v", perr)
			}
			return nil
		})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Fatalf("file error without the file name: %v", err)
			}
			return
		}
		rows, err := reportRows(ReportParser{Location: nairobi}, data)
		if err != nil {
			return
		}
		again, err := reportRows(ReportParser{Location: nairobi}, renderReport(rows))
		if err != nil {
			t.Fatalf("rendered rows do not parse: %v\n%s", err, renderReport(rows))
		}
		if !sameRows(rows, again) {
			t.Fatalf("parse -> render -> parse changed the rows:\n%s\nbecame\n%s", renderReport(rows), renderReport(again))
		}
	})
}

// FuzzEventBody: no panic; a parsed body's sightings and outcomes are
// complete; a refused body gives nothing and a *ledger.ParseError.
func FuzzEventBody(f *testing.F) {
	paths, _ := filepath.Glob("testdata/events/*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"id":"evt_1","object":"event","type":"charge.succeeded","created":1732370705,"data":{"object":{"id":"ch_1","amount":10.5}}}`))
	f.Add([]byte(`{"id":"evt_1","object":"event","type":"payment_intent.succeeded","created":1,"data":{"object":{"id":"pi_1","object":"payment_intent","amount":550,"currency":"isk","status":"succeeded"}}}`))
	f.Add([]byte(`{"id":"evt_1","object":"event","type":"refund.created","created":1,"data":{"object":{"id":"re_1","amount":1,"currency":"mga","created":1,"status":"canceled","charge":{"id":"ch_9"}}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := EventParser{}.ParseCallback(body, "callback:1", T0)
		if err != nil {
			perr, ok := err.(*ledger.ParseError)
			if !ok || perr.File != "callback:1" || perr.Field == "" {
				t.Fatalf("error %T %v does not name the delivery and field", err, err)
			}
			if ev.Kind != "" || len(ev.Sightings) != 0 || len(ev.Outcomes) != 0 {
				t.Fatalf("refused body gave evidence %+v", ev)
			}
			return
		}
		if ev.Kind == "" {
			t.Fatalf("parsed body without a kind")
		}
		for _, s := range ev.Sightings {
			checkSighting(t, s)
		}
		for _, o := range ev.Outcomes {
			if o.ProviderRef == "" || o.Status == "" || o.Amount.IsZero() || o.At.IsZero() {
				t.Fatalf("incomplete outcome %+v", o)
			}
		}
	})
}
