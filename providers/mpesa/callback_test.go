package mpesa

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

var received = time.Date(2024, 2, 6, 15, 0, 0, 0, time.UTC)

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCallbackFixturesGolden parses every callback sample of the reference
// and compares the normalised evidence with the golden file.
func TestCallbackFixturesGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/callbacks/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		ev, err := CallbackParser{}.ParseCallback(readFixture(t, f), "callback:1", received)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		b.WriteString("== " + filepath.Base(f) + "\n")
		b.WriteString(renderEvidence(ev))
	}
	golden.Assert(t, "testdata/golden/callbacks.golden", b.String())
}

func TestCallbackFixtures(t *testing.T) {
	t.Parallel()
	type want struct {
		kind    string
		id      string
		typ     ledger.TxnType
		amount  string
		at      string
		ref     string
		provRef string
		party   string
		linked  string
		outcome providers.ChargeStatus
		code    string
		noTxn   bool
		noParty []string // substrings that must not appear in the counterparty
		channel string
		srcRef  string
	}
	cases := map[string]want{
		"stk_success.json": {kind: KindSTK, id: "NLJ7RT61SV", typ: ledger.TxnCharge, amount: "1.00", at: "2019-12-19T07:21:15Z",
			provRef: "ws_CO_191220191020363925", party: "2547****4149", outcome: providers.StatusSucceeded, code: "0",
			noParty: []string{"254708374149"}, channel: "stk_callback", srcRef: "stk:ws_CO_191220191020363925"},
		"stk_success_balance.json": {kind: KindSTK, id: "QH57ABCD12", typ: ledger.TxnCharge, amount: "1.00", at: "2022-08-05T08:23:01Z",
			provRef: "ws_CO_05082022112233445254796440427", party: "2547****0427", outcome: providers.StatusSucceeded, code: "0"},
		"stk_success_int_amount.json": {kind: KindSTK, id: "LGR7OWQX0R", typ: ledger.TxnCharge, amount: "1.00", at: "2017-07-27T12:48:00Z",
			outcome: providers.StatusSucceeded, code: "0"},
		"stk_failure.json": {kind: KindSTK, noTxn: true, outcome: providers.StatusFailed, code: "1032"},
		"c2b_official.json": {kind: KindC2BConfirmation, id: "RKTQDM7W6S", typ: ledger.TxnCharge, amount: "10.00", at: "2019-11-22T03:38:45Z",
			ref: "invoice008", party: "2547*****149 - John", noParty: []string{"Doe"}, channel: "c2b_confirmation", srcRef: "c2b:RKTQDM7W6S"},
		"c2b_production.json": {kind: KindC2BConfirmation, id: "SB62A1SVRK", typ: ledger.TxnCharge, amount: "1.00", at: "2024-02-06T14:52:04Z",
			ref: "peter", party: "2547*****845 - PETER"},
		"c2b_hashed.json": {kind: KindC2BConfirmation, id: "TK60708BHZ", typ: ledger.TxnCharge, amount: "1.00", at: "2025-11-06T20:02:12Z",
			ref: "UM001", party: "sha256:94c392c3… - NICHOLAS", noParty: []string{"94c392c311d522da", "JOHN", "SONGOK"}},
		"b2c_success.json": {kind: KindB2C, id: "SG632NMUAB", typ: ledger.TxnPayout, amount: "10.00", at: "2024-07-06T19:48:52Z",
			provRef: "53e3-4aa8-9fe0-8fb5e4092cdd3533373", party: "2547****2645 - NICHOLAS", noParty: []string{"254705912645", "SONGOK"},
			channel: "b2c_result", srcRef: "result:AG_20240706_2010364430d9bbdaf872"},
		"b2c_production.json": {kind: KindB2C, id: "QGE0ABCDEF", typ: ledger.TxnPayout, amount: "100.00", at: "2022-07-14T13:29:43Z",
			party: "0758****5738 - LEI", noParty: []string{"WANG"}},
		"b2c_failure.json":         {kind: KindB2C, noTxn: true},
		"b2b_reference_array.json": {kind: KindB2C, noTxn: true},
		"reversal_success.json": {kind: KindReversal, id: "SKE52PAWR9", typ: ledger.TxnReversal, amount: "1.00", at: "2021-11-14T10:27:11Z",
			linked: "SKC82PACB8", party: "2547****2645 - NICHOLAS", provRef: "dad6-4c34-8787-c8cb963a496d1268232",
			outcome: providers.StatusSucceeded, code: "0"},
		// A failure settles the refund attempt as failed; trust ResultCode,
		// never ResultDesc (code 21 says "processed successfully").
		"reversal_failure.json":    {kind: KindReversal, noTxn: true, outcome: providers.StatusFailed, code: "R000002"},
		"reversal_old_code21.json": {kind: KindReversal, noTxn: true, outcome: providers.StatusFailed, code: "21"},
		// A queue timeout (ResultType 1) is no verdict: unknown.
		"reversal_timeout.json": {kind: KindResult, noTxn: true, outcome: providers.StatusUnknown, code: "1"},
		// A status result answering a refund status query (its Occasion)
		// is that attempt's reversal and its verdict.
		"status_reversal.json": {kind: KindTransactionStatus, id: "SKE52PAWR9", typ: ledger.TxnReversal, amount: "1.00",
			at: "2021-11-14T10:27:11Z", linked: "SKC82PACB8", provRef: "dad6-4c34-8787-c8cb963a496d1268232",
			party: "2547****2645 - NICHOLAS", outcome: providers.StatusSucceeded, code: "Completed"},
		"status_official.json": {kind: KindTransactionStatus, id: "MBN31H462N", typ: ledger.TxnPayout, amount: "300.00", at: "2018-02-23T02:41:12Z",
			party: "2547****4149 - John", noParty: []string{"Doe", "600310"}, channel: "transaction_status_result"},
		"status_production.json": {kind: KindTransactionStatus, id: "SB61A1RXYZ", typ: ledger.TxnCharge, amount: "1.00", at: "2024-02-06T11:36:45Z",
			party: "0790****2909 - Dennis", noParty: []string{"ngari", "KERICHO"}},
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body := readFixture(t, filepath.Join("testdata", "callbacks", name))
			ev, err := CallbackParser{}.ParseCallback(body, "callback:7", received)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != w.kind {
				t.Errorf("kind = %s, want %s", ev.Kind, w.kind)
			}
			if string(ev.Ack) != string(AckSuccess) {
				t.Errorf("ack = %s", ev.Ack)
			}
			if w.noTxn {
				if len(ev.Sightings) != 0 {
					t.Errorf("sightings = %+v, want none", ev.Sightings)
				}
			} else {
				if len(ev.Sightings) != 1 {
					t.Fatalf("sightings = %d, want 1", len(ev.Sightings))
				}
				s := ev.Sightings[0]
				tx := s.Txn
				if tx.Provider != "mpesa" || tx.ID != w.id || tx.Type != w.typ || tx.Status != ledger.TxnSucceeded ||
					tx.Amount.Currency != "KES" || tx.Amount.Text() != w.amount || tx.OccurredAt.Format(time.RFC3339) != w.at {
					t.Errorf("txn = %s %s %s %s %s %s", tx.Provider, tx.ID, tx.Type, tx.Status, tx.Amount, tx.OccurredAt.Format(time.RFC3339))
				}
				if tx.OccurredAt.Location() != time.UTC {
					t.Errorf("occurred at %v is not UTC", tx.OccurredAt)
				}
				if tx.Reference != w.ref || tx.ProviderRef != w.provRef && w.provRef != "" || tx.LinkedID != w.linked {
					t.Errorf("ref %q provider_ref %q linked %q", tx.Reference, tx.ProviderRef, tx.LinkedID)
				}
				if w.party != "" && tx.Counterparty != w.party {
					t.Errorf("counterparty = %q, want %q", tx.Counterparty, w.party)
				}
				for _, bad := range w.noParty {
					if strings.Contains(tx.Counterparty, bad) {
						t.Errorf("counterparty %q reveals %q", tx.Counterparty, bad)
					}
				}
				if w.channel != "" && s.Source.Channel != w.channel {
					t.Errorf("channel = %s, want %s", s.Source.Channel, w.channel)
				}
				if w.srcRef != "" && s.Source.Ref != w.srcRef {
					t.Errorf("source ref = %s, want %s", s.Source.Ref, w.srcRef)
				}
				if string(s.Source.Raw) != string(body) || !s.Source.ReceivedAt.Equal(received) {
					t.Errorf("source raw/received not kept")
				}
			}
			if w.outcome == "" {
				if len(ev.Outcomes) != 0 {
					t.Errorf("outcomes = %+v, want none", ev.Outcomes)
				}
				return
			}
			if len(ev.Outcomes) != 1 {
				t.Fatalf("outcomes = %+v, want one", ev.Outcomes)
			}
			o := ev.Outcomes[0]
			if o.Status != w.outcome || o.Code != w.code || o.ProviderRef == "" {
				t.Errorf("outcome = %+v", o)
			}
			if w.outcome == providers.StatusSucceeded && (o.TxnID != w.id || o.Amount.Text() != w.amount) {
				t.Errorf("success outcome = %+v", o)
			}
			if w.provRef != "" && o.ProviderRef != w.provRef {
				t.Errorf("outcome names %q, want %q", o.ProviderRef, w.provRef)
			}
			if w.outcome != providers.StatusSucceeded && (o.TxnID != "" || o.Reason == "") {
				t.Errorf("failed outcome = %+v", o)
			}
		})
	}
}

// TestCallbackTolerance covers what Daraja varies: numbers vs strings,
// items by name in any order, missing values, nesting, key spelling.
func TestCallbackTolerance(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		body   string
		kind   string
		id     string
		amount string
		code   string
	}{
		{"stk amount as string and receipt lower case",
			`{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":"0","ResultDesc":"ok","CallbackMetadata":{"Item":[{"Name":"PhoneNumber","Value":"254708374149"},{"Name":"TransactionDate","Value":"20191219102115"},{"Name":"MpesaReceiptNumber","Value":"nlj7rt61sv"},{"Name":"Amount","Value":"250.50"}]}}}}`,
			KindSTK, "NLJ7RT61SV", "250.50", "0"},
		{"stk single item object and no phone",
			`{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_2","ResultCode":0,"CallbackMetadata":{"Item":[{"Name":"Amount","Value":5},{"Name":"MpesaReceiptNumber","Value":"ABC1234567"},{"Name":"TransactionDate","Value":20240101000000}]}}}}`,
			KindSTK, "ABC1234567", "5.00", "0"},
		{"stk string result code", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_3","ResultCode":"SFC_IC0003","ResultDesc":"operator does not exist"}}}`,
			KindSTK, "", "", "SFC_IC0003"},
		{"stk balance as mpesakit string", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_4","ResultCode":0,"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1.00},{"Name":"MpesaReceiptNumber","Value":"ABC1234568"},{"Name":"Balance","Value":"{Amount={CurrencyCode=KES, MinimumAmount=49900, BasicAmount=499.00}}"},{"Name":"TransactionDate","Value":20240101000000}]}}}}`,
			KindSTK, "ABC1234568", "1.00", "0"},
		{"c2b amount as number, names absent", `{"TransID":"RKTQDM7W6T","TransTime":20191122063845,"TransAmount":10,"MSISDN":254708374149}`,
			KindC2BConfirmation, "RKTQDM7W6T", "10.00", ""},
		{"c2b nulls", `{"TransactionType":null,"TransID":"RKTQDM7W6U","TransTime":"20191122063845","TransAmount":"1","FirstName":null}`,
			KindC2BConfirmation, "RKTQDM7W6U", "1.00", ""},
		{"b2c unknown keys and odd values in unread items", `{"Result":{"ResultCode":"0","ConversationID":"AG_1","Extra":{"x":[1,2]},"ResultParameters":{"ResultParameter":[{"Key":"TransactionReceipt","Value":"SG632NMUAC"},{"Key":"TransactionAmount","Value":"10"},{"Key":"TransactionCompletedDateTime","Value":"06.07.2024 22:48:52"},{"Key":"Whatever","Value":{"nested":true}},{"Key":"B2CRecipientIsRegisteredCustomer","Value":true}]}}}`,
			KindB2C, "SG632NMUAC", "10.00", ""},
		{"transaction status with spaced keys and reversed status", `{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"Receipt No","Value":"MBN31H462P"},{"Key":"Transaction Status","Value":"Reversed"},{"Key":"Amount","Value":"300"},{"Key":"Finalised Time","Value":20180223054112},{"Key":"ReasonType","Value":"Pay Bill Online"}]}}}`,
			KindTransactionStatus, "MBN31H462P", "300.00", ""},
		{"inverted nesting (mpesakit)", `{"Result":{"ResultCode":0,"ConversationID":"AG_2","ResultParameter":{"ResultParameters":[{"Key":"OriginalTransactionID","Value":"SKC82PACB8"},{"Key":"Amount","Value":"5"},{"Key":"TransCompletedTime","Value":"20211114132711"}]},"TransactionID":"SKE52PAWS1"}}`,
			KindReversal, "SKE52PAWS1", "5.00", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := CallbackParser{}.ParseCallback([]byte(tc.body), "callback:1", received)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != tc.kind {
				t.Errorf("kind = %s", ev.Kind)
			}
			if tc.id != "" {
				if len(ev.Sightings) != 1 || ev.Sightings[0].Txn.ID != tc.id || ev.Sightings[0].Txn.Amount.Text() != tc.amount {
					t.Fatalf("sightings = %+v", ev.Sightings)
				}
			}
			if tc.code != "" && (len(ev.Outcomes) != 1 || ev.Outcomes[0].Code != tc.code) {
				t.Errorf("outcomes = %+v", ev.Outcomes)
			}
		})
	}
}

func TestParseCallbackKind(t *testing.T) {
	t.Parallel()
	c2b := readFixture(t, "testdata/callbacks/c2b_official.json")
	ev, err := CallbackParser{}.ParseCallbackKind(KindC2BValidation, c2b, "callback:1", received)
	if err != nil || ev.Kind != KindC2BValidation || len(ev.Sightings) != 0 || string(ev.Ack) != string(AckAccepted) {
		t.Fatalf("validation = %+v, %v", ev, err)
	}
	// A failed result without parameters: the endpoint names the API.
	bare := []byte(`{"Result":{"ResultType":0,"ResultCode":1,"ResultDesc":"The balance is insufficient for the transaction.","ConversationID":"AG_3","TransactionID":"SKE0000000"}}`)
	for _, kind := range []string{KindB2C, KindReversal, KindTransactionStatus} {
		ev, err := CallbackParser{}.ParseCallbackKind(kind, bare, "callback:1", received)
		if err != nil || ev.Kind != kind {
			t.Errorf("hint %s: %+v, %v", kind, ev, err)
		}
	}
	if ev, err := (CallbackParser{}).ParseCallback(bare, "callback:1", received); err != nil || ev.Kind != KindResult {
		t.Errorf("no hint: %+v, %v", ev, err)
	}
	// The shape wins over a contradicting hint.
	stk := readFixture(t, "testdata/callbacks/stk_success.json")
	if ev, err := (CallbackParser{}).ParseCallbackKind(KindB2C, stk, "callback:1", received); err != nil || ev.Kind != KindSTK {
		t.Errorf("stk at b2c endpoint: %+v, %v", ev, err)
	}
}

func TestCallbackErrorsNameTheField(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, body, field string }{
		{"truncated", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1"`, "body"},
		{"not an object", `[1,2]`, "body"},
		{"unknown shape", `{"hello":"world"}`, "body"},
		{"stk without stkCallback", `{"Body":{}}`, "Body.stkCallback"},
		{"stk callback is a string", `{"Body":{"stkCallback":"x"}}`, "Body.stkCallback"},
		{"stk without checkout id", `{"Body":{"stkCallback":{"ResultCode":0}}}`, "Body.stkCallback.CheckoutRequestID"},
		{"stk result code object", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":{}}}}`, "Body.stkCallback.ResultCode"},
		{"stk success without metadata", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0}}}`, "Body.stkCallback.CallbackMetadata"},
		{"stk missing receipt", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1},{"Name":"TransactionDate","Value":20191219102115}]}}}}`, "Body.stkCallback.CallbackMetadata.Item.MpesaReceiptNumber"},
		{"stk amount float syntax", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1e3},{"Name":"MpesaReceiptNumber","Value":"NLJ7RT61SV"},{"Name":"TransactionDate","Value":20191219102115}]}}}}`, "Body.stkCallback.CallbackMetadata.Item.Amount"},
		{"c2b negative amount", `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"-10"}`, "TransAmount"},
		{"c2b over-precise amount", `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"10.005"}`, "TransAmount"},
		{"c2b bad time", `{"TransID":"RKTQDM7W6S","TransTime":"2019-11-22 06:38:45","TransAmount":"10"}`, "TransTime"},
		{"c2b missing TransID", `{"TransTime":"20191122063845","TransAmount":"10"}`, "TransID"},
		{"c2b MSISDN object", `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"10","MSISDN":{"a":1}}`, "MSISDN"},
		{"b2c missing amount", `{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"TransactionReceipt","Value":"SG632NMUAB"},{"Key":"TransactionCompletedDateTime","Value":"06.07.2024 22:48:52"}]}}}`, "Result.ResultParameters.TransactionAmount"},
		{"b2c bad date", `{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"TransactionReceipt","Value":"SG632NMUAB"},{"Key":"TransactionAmount","Value":10},{"Key":"TransactionCompletedDateTime","Value":"2024/07/06"}]}}}`, "Result.ResultParameters.TransactionCompletedDateTime"},
		{"reversal placeholder id", `{"Result":{"ResultCode":0,"TransactionID":"SKE0000000","ResultParameters":{"ResultParameter":[{"Key":"OriginalTransactionID","Value":"SKC82PACB8"},{"Key":"Amount","Value":1},{"Key":"TransCompletedTime","Value":20211114132711}]}}}`, "Result.TransactionID"},
		{"status unknown status", `{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"ReceiptNo","Value":"MBN31H462N"},{"Key":"TransactionStatus","Value":"Weird"},{"Key":"Amount","Value":"300"},{"Key":"FinalisedTime","Value":"20180223054112"}]}}}`, "Result.ResultParameters.TransactionStatus"},
		{"success result with no parameters", `{"Result":{"ResultCode":0,"ConversationID":"AG_1"}}`, "Result.ResultParameters"},
		// Hostile bodies: a key named twice would silently keep the last
		// value; trailing data after the document; bytes that are not UTF-8.
		{"c2b amount named twice", `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"10","TransAmount":"20"}`, "TransAmount"},
		{"c2b key twice in another case", `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"10","transamount":"20"}`, "transamount"},
		{"stk key twice deep", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"ResultDesc":"ok","CallbackMetadata":{"Item":[{"Name":"Amount","Value":10,"value":20}]}}}}`, "Body.stkCallback.CallbackMetadata.Item[0].value"},
		{"stk item named twice", `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"ResultDesc":"ok","CallbackMetadata":{"Item":[{"Name":"Amount","Value":10},{"Name":"Amount","Value":20},{"Name":"MpesaReceiptNumber","Value":"NLJ7RT61SV"},{"Name":"TransactionDate","Value":20191219102115}]}}}}`, "Body.stkCallback.CallbackMetadata.Item.Amount"},
		{"trailing data", `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"10"} {"TransAmount":"20"}`, "body"},
		{"not UTF-8", "{\"TransID\":\"RKTQDM7W6S\",\"TransTime\":\"20191122063845\",\"TransAmount\":\"10\",\"BillRefNumber\":\"a\xffb\"}", "body"},
		{"c2b year 9999", `{"TransID":"RKTQDM7W6S","TransTime":"99991122063845","TransAmount":"10"}`, "occurred_at"},
		{"c2b absurd amount", `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"1000000000000000000000000000000"}`, "amount"},
		{"c2b control character in reference", `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"10","BillRefNumber":"a\u001b[2Jb"}`, "reference"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := CallbackParser{}.ParseCallback([]byte(tc.body), "callback:9", received)
			var pe *ledger.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ledger.ParseError", err)
			}
			if pe.Field != tc.field || pe.File != "callback:9" {
				t.Errorf("field = %q file = %q (%v), want field %q", pe.Field, pe.File, err, tc.field)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("message %q does not name %s", err, tc.field)
			}
		})
	}
}
