package stripe

import (
	"bytes"
	"errors"
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
	more, _ := filepath.Glob("../../reconciler/testdata/stripe/*.csv")
	paths = append(paths, more...)
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
	f.Add([]byte(faceHeader + goodFaceRow))
	f.Add([]byte(faceHeader + "txn_1,2024-11-23 14:05:06,usd,65.00,15.00,50.00,dispute_reversal,dp_1,ch_1,k,60.00,eur\n"))
	f.Add([]byte(faceHeader + "txn_1,2024-11-23 14:05:06,usd,-65.00,15.00,-80.00,dispute,,ch_1,k,60.00,eur\n"))
	f.Add([]byte(faceHeader + "txn_1,2024-11-23 14:05:06,usd,-1.00,0.00,-1.00,mystery_category,x,,,,\n"))
	f.Add([]byte(faceHeader + "txn_1,2024-11-23 14:05:06,usd,8.00,0.00,8.00,refund_failure,re_1,ch_1,k,8.00,usd\n"))
	f.Add([]byte(faceHeader + "txn_1,2024-11-23 14:05:06,usd,10.02,0.59,9.43,charge,ch_1,ch_1,k,1500,krw\n"))
	f.Add([]byte(faceHeader + "txn_1,2024-11-23 14:05:06,usd,40.15,1.46,38.69,charge,ch_1,ch_1,k,12.346,bhd\n"))
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
	f.Add([]byte(`{"id":"evt_1","object":"event","type":"charge.succeeded","created":1,"data":{"object":{"id":"ch_1","object":"charge","amount":1050,"currency":"usd","created":1,"status":"succeeded","Amount":1}}}`))
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

// apiObjectSeeds are balance transactions and disputes as the API sends
// them, good and bad, from the table cases.
var apiObjectSeeds = []string{
	`{"id":"txn_1","object":"balance_transaction","amount":5012,"fee":175,"currency":"usd","created":1732356125,"status":"available","type":"charge","reporting_category":"charge","source":"ch_1","exchange_rate":1.253}`,
	`{"id":"txn_2","object":"balance_transaction","amount":-300,"fee":0,"currency":"usd","created":1732356125,"status":"pending","type":"transfer","reporting_category":"transfer","source":{"id":"tr_1","object":"transfer"}}`,
	`{"id":"txn_3","object":"balance_transaction","amount":-100,"fee":0,"currency":"usd","created":1732356125,"status":"available","type":"mystery","reporting_category":"mystery_category","source":null}`,
	`{"id":"txn_4","object":"balance_transaction","amount":-1000,"fee":0,"currency":"usd","created":1732356125,"status":"available","type":"refund","reporting_category":"partial_capture_reversal","source":{"id":"re_1","object":"refund","charge":"ch_1"}}`,
	`{"id":"txn_5","object":"balance_transaction","amount":6500,"fee":-1500,"currency":"usd","created":1732356125,"status":"available","type":"adjustment","reporting_category":"dispute_reversal","source":"dp_1","exchange_rate":"x"}`,
	`{"id":"dp_1","object":"dispute","amount":6000,"currency":"eur","created":1732370400,"status":"won","charge":{"id":"ch_1","object":"charge","metadata":{"intent_key":"charge:won"},"customer":"cus_1"},"payment_intent":"pi_1","balance_transactions":[{"id":"txn_6","object":"balance_transaction","amount":-6500,"fee":1500,"currency":"usd","created":1732370401,"status":"available","reporting_category":"dispute","exchange_rate":1.0833},{"id":"txn_7","object":"balance_transaction","amount":6500,"fee":0,"currency":"usd","created":1732374000,"status":"available","reporting_category":"dispute_reversal"}]}`,
	`{"id":"dp_2","object":"dispute","amount":2550,"currency":"usd","created":1732370400,"status":"warning_needs_response","charge":"ch_2","balance_transactions":[]}`,
	`{"id":"dp_3","object":"dispute","amount":1500,"currency":"jpy","created":1732370400,"status":"exploded","charge":"ch_3"}`,
	`{"id":"dp_4","object":"dispute","amount":12346,"currency":"kwd","created":1732370400,"status":"lost","charge":null}`,
}

// FuzzAPIObject: no panic; a balance transaction or dispute that
// normalises gives complete sightings (amounts at their currency's scale,
// settlements in another currency, undocumented lines never charges); one
// that does not names its field.
func FuzzAPIObject(f *testing.F) {
	for _, s := range apiObjectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := sighter{channel: ChannelAPI, ref: func(id string) string { return "ref:" + id }, receivedAt: T0}
		for _, norm := range []func([]byte, string, sighter) ([]providers.Sighting, error){balanceTxnSightings, disputeSightings} {
			ss, err := norm(raw, "", s)
			if err != nil {
				var fe *ledger.FieldError
				if !errors.As(err, &fe) || fe.Field == "" {
					t.Fatalf("error %T %v does not name a field", err, err)
				}
				if len(ss) != 0 {
					t.Fatalf("refused object gave %d sightings", len(ss))
				}
				continue
			}
			for _, x := range ss {
				checkSighting(t, x)
				if x.Txn.Type == ledger.TxnCharge {
					t.Fatalf("a balance transaction or dispute became a charge: %+v", x.Txn)
				}
			}
		}
	})
}
