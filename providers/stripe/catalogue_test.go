package stripe

import (
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers/csvfile"
)

const reportHeader = "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_metadata[intent_key]\n"

// goodReportRow is valid; every bad case puts a bad row before it, so the
// good one shows that reading goes on and the bad one that nothing of it
// is imported.
const goodReportRow = "txn_good,2024-11-23 14:05:06,usd,10.00,0.59,9.41,charge,ch_good,ch_good,charge:order-1\n"

// faceHeader and goodFaceRow add the customer-facing columns.
const (
	faceHeader  = "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_metadata[intent_key],customer_facing_amount,customer_facing_currency\n"
	goodFaceRow = "txn_good,2024-11-23 14:05:06,usd,10.00,0.59,9.41,charge,ch_good,ch_good,charge:order-1,1500,jpy\n"
)

// The catalogue of bad inputs: each names the field and where it is, and
// imports nothing of the bad line or body.
func TestCatalogueReportCSV(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		data  string
		line  int
		field string
		want  string
		// whole is true when the file as a whole is refused.
		whole bool
		is    error
	}{
		{name: "amount not a number", data: reportHeader + "txn_1,2024-11-23 14:05:06,usd,ten,0.00,,charge,ch_1,ch_1,\n" + goodReportRow,
			line: 2, field: "gross", is: money.ErrSyntax},
		{name: "negative charge", data: reportHeader + "txn_1,2024-11-23 14:05:06,usd,-10.00,0.00,-10.00,charge,ch_1,ch_1,\n" + goodReportRow,
			line: 2, field: "gross", want: "negative on a charge"},
		{name: "over-precise amount", data: reportHeader + "txn_1,2024-11-23 14:05:06,usd,10.005,0.00,,charge,ch_1,ch_1,\n" + goodReportRow,
			line: 2, field: "gross", is: money.ErrTooPrecise},
		{name: "over-precise yen fee", data: reportHeader + "txn_1,2024-11-23 14:05:06,jpy,1500,45.5,,charge,ch_1,ch_1,\n" + goodReportRow,
			line: 2, field: "fee", is: money.ErrTooPrecise},
		{name: "unknown currency", data: reportHeader + "txn_1,2024-11-23 14:05:06,xyz,10.00,0.00,,charge,ch_1,ch_1,\n" + goodReportRow,
			line: 2, field: "currency", want: "unknown currency"},
		{name: "missing id", data: reportHeader + ",2024-11-23 14:05:06,usd,10.00,0.00,,charge,ch_1,ch_1,\n" + goodReportRow,
			line: 2, field: "balance_transaction_id", want: "is empty"},
		{name: "missing charge id", data: reportHeader + "txn_1,2024-11-23 14:05:06,usd,10.00,0.00,,charge,,,\n" + goodReportRow,
			line: 2, field: "charge_id", want: "is empty"},
		{name: "positive dispute", data: reportHeader + "txn_1,2024-11-23 14:05:06,usd,10.00,0.00,,dispute,dp_1,ch_1,\n" + goodReportRow,
			line: 2, field: "gross", want: "positive on a dispute line"},
		{name: "negative dispute reversal", data: reportHeader + "txn_1,2024-11-23 14:05:06,usd,-10.00,0.00,,dispute_reversal,dp_1,ch_1,\n" + goodReportRow,
			line: 2, field: "gross", want: "negative on a dispute_reversal line"},
		{name: "customer-facing amount over-precise", data: faceHeader + "txn_1,2024-11-23 14:05:06,usd,10.00,0.00,,charge,ch_1,ch_1,,1500.5,jpy\n" + goodFaceRow,
			line: 2, field: "customer_facing_amount", is: money.ErrTooPrecise},
		{name: "customer-facing amount without currency", data: faceHeader + "txn_1,2024-11-23 14:05:06,usd,10.00,0.00,,charge,ch_1,ch_1,,8.00,\n" + goodFaceRow,
			line: 2, field: "customer_facing_currency", want: "is empty"},
		{name: "no linking columns", data: "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,source_id\n" +
			"txn_1,2024-11-23 14:05:06,usd,10.00,0.00,10.00,charge,ch_1\n",
			line: 1, field: "payment_intent_id", want: "payment_intent_id or payment_metadata[intent_key]", whole: true},
		{name: "no charge column", data: "balance_transaction_id,created_utc,currency,gross,fee,net,reporting_category,payment_intent_id\n" +
			"txn_1,2024-11-23 14:05:06,usd,10.00,0.00,10.00,charge,pi_1\n",
			line: 1, field: "charge_id", want: "charge_id or source_id", whole: true},
		{name: "date in the wrong format", data: reportHeader + "txn_1,23/11/2024 14:05,usd,10.00,0.00,,charge,ch_1,ch_1,\n" + goodReportRow,
			line: 2, field: "created_utc", want: "not a time like"},
		{name: "net does not add up", data: reportHeader + "txn_1,2024-11-23 14:05:06,usd,10.00,0.59,9.40,charge,ch_1,ch_1,\n" + goodReportRow,
			line: 2, field: "net", want: "not gross 10.00 minus fee 0.59"},
		{name: "empty category", data: reportHeader + "txn_1,2024-11-23 14:05:06,usd,10.00,0.00,,,tr_1,,\n" + goodReportRow,
			line: 2, field: "reporting_category", want: "is empty"},
		{name: "bad row after a good one", data: reportHeader + goodReportRow + "txn_2,2024-11-23 14:05:06,usd,1e3,0.00,,charge,ch_2,ch_2,\n",
			line: 3, field: "gross", is: money.ErrSyntax},
		{name: "no header", data: strings.TrimPrefix(reportHeader+goodReportRow, reportHeader) + goodReportRow,
			line: 1, field: "balance_transaction_id", want: "is this the header row", whole: true},
		{name: "header only lacks a column", data: "balance_transaction_id,created_utc,currency,gross,reporting_category,source_id\n" + goodReportRow,
			line: 1, field: "fee", want: "lacks column(s) fee", whole: true},
		{name: "empty file", data: "", line: 1, want: "no header row", whole: true},
		{name: "gross twice", data: strings.Replace(reportHeader, "\n", ",gross\n", 1) + strings.Replace(goodReportRow, "\n", ",1.00\n", 1),
			line: 1, field: "gross", want: `column "gross" appears more than once in the header`, whole: true, is: csvfile.ErrDuplicateColumn},
		{name: "UTF-16", data: "\xff\xfe" + strings.Join(strings.Split(reportHeader, ""), "\x00") + "\x00",
			line: 1, want: "UTF-16 is not supported: save the file as UTF-8", whole: true},
	}
	for _, tc := range cases {
		got, err := parseReport(t, ReportParser{}, []byte(tc.data), "payouts.csv")
		var perr *ledger.ParseError
		if tc.whole {
			if !errors.As(err, &perr) {
				t.Errorf("%s: err = %v, want a *ledger.ParseError for the file", tc.name, err)
				continue
			}
			if len(got.sightings) != 0 || len(got.rejects) != 0 {
				t.Errorf("%s: a refused file emitted %d and rejected %d rows", tc.name, len(got.sightings), len(got.rejects))
			}
		} else {
			if err != nil {
				t.Errorf("%s: the file failed as a whole: %v", tc.name, err)
				continue
			}
			if len(got.rejects) != 1 {
				t.Errorf("%s: %d rejects, want 1", tc.name, len(got.rejects))
				continue
			}
			perr = got.rejects[0]
			lines := strings.Split(tc.data, "\n")
			if string(got.raws[0]) != lines[tc.line-1] {
				t.Errorf("%s: rejected raw %q, want line %d %q", tc.name, got.raws[0], tc.line, lines[tc.line-1])
			}
			if len(got.sightings) != 2 || got.sightings[0].Txn.ID != "ch_good" || got.sightings[1].Txn.ID != "txn_good" {
				t.Errorf("%s: emitted %s, want only the good row's charge and fee", tc.name, renderSightings(got.sightings))
			}
		}
		assertParseError(t, tc.name, perr, "payouts.csv", tc.line, tc.field, tc.want, tc.is)
	}
}

func TestCatalogueWebhookBodies(t *testing.T) {
	t.Parallel()
	charge := func(obj string) string {
		return `{"id":"evt_1","object":"event","type":"charge.succeeded","created":1732370705,"data":{"object":` + obj + `}}`
	}
	const okCharge = `"object":"charge","currency":"usd","created":1732370704,"status":"succeeded"`
	cases := []struct {
		name, body, field, want string
		is                      error
	}{
		{"amount as a decimal string", charge(`{"id":"ch_1","amount":"10.50",` + okCharge + `}`), "data.object.amount", "want an integer", nil},
		{"fractional minor units", charge(`{"id":"ch_1","amount":10.5,` + okCharge + `}`), "data.object.amount", "want an integer, got JSON number 10.5", nil},
		{"negative amount", charge(`{"id":"ch_1","amount":-1050,` + okCharge + `}`), "data.object.amount", "is negative", nil},
		{"over-precise for the currency", charge(`{"id":"ch_1","amount":550,"object":"charge","currency":"isk","created":1732370704,"status":"succeeded"}`),
			"data.object.amount", "", money.ErrTooPrecise},
		{"unknown currency", charge(`{"id":"ch_1","amount":1050,"object":"charge","currency":"xyz","created":1732370704,"status":"succeeded"}`),
			"data.object.currency", "unknown currency", nil},
		{"missing id", charge(`{"amount":1050,` + okCharge + `}`), "data.object.id", "is missing", nil},
		{"time as a date string", charge(`{"id":"ch_1","amount":1050,"object":"charge","currency":"usd","created":"2024-11-23","status":"succeeded"}`),
			"data.object.created", "want an integer", nil},
		{"unknown charge status", charge(`{"id":"ch_1","amount":1050,"object":"charge","currency":"usd","created":1732370704,"status":"done"}`),
			"data.object.status", `"done"`, nil},
		{"refund embedded with a bad amount", charge(`{"id":"ch_1","amount":1050,` + okCharge + `,"refunds":{"data":[{"id":"re_1","object":"refund","amount":true,"currency":"usd","created":1732370704,"status":"succeeded"}]}}`),
			"data.object.refunds.data[0].amount", "want an integer", nil},
		{"no data object", `{"id":"evt_1","object":"event","type":"charge.succeeded","created":1732370705,"data":{}}`, "data.object", "is missing", nil},
		{"event without a type", `{"id":"evt_1","object":"event","created":1732370705,"data":{"object":{}}}`, "type", "is missing", nil},
		{"not JSON", `Body=stkCallback`, "(body)", "not a JSON object", nil},
		{"outcome with an unknown status", `{"id":"evt_1","object":"event","type":"payment_intent.succeeded","created":1732370705,"data":{"object":{"id":"pi_1","object":"payment_intent","amount":1050,"currency":"usd","status":"done"}}}`,
			"data.object.status", `"done"`, nil},
	}
	for _, tc := range cases {
		ev, err := EventParser{}.ParseCallback([]byte(tc.body), "callback:7", T0)
		var perr *ledger.ParseError
		if !errors.As(err, &perr) {
			t.Errorf("%s: err = %v, want a *ledger.ParseError", tc.name, err)
			continue
		}
		if len(ev.Sightings) != 0 || len(ev.Outcomes) != 0 {
			t.Errorf("%s: a refused body still gave evidence %+v", tc.name, ev)
		}
		assertParseError(t, tc.name, perr, "callback:7", 0, tc.field, tc.want, tc.is)
	}
}

func assertParseError(t *testing.T, name string, perr *ledger.ParseError, file string, line int, field, want string, is error) {
	t.Helper()
	if perr == nil {
		t.Errorf("%s: no error", name)
		return
	}
	if perr.File != file || perr.Line != line || perr.Field != field {
		t.Errorf("%s: error at %s line %d field %q, want %s line %d field %q (%v)", name, perr.File, perr.Line, perr.Field,
			file, line, field, perr)
	}
	if want != "" && !strings.Contains(perr.Error(), want) {
		t.Errorf("%s: error %q does not say %q", name, perr.Error(), want)
	}
	if is != nil && !errors.Is(perr, is) {
		t.Errorf("%s: error %v is not %v", name, perr, is)
	}
	if msg := perr.Error(); !strings.Contains(msg, file) || (field != "" && !strings.Contains(msg, field)) {
		t.Errorf("%s: message %q does not name the file and field", name, msg)
	}
}
