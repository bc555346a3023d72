package mpesa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/statement"
)

// badInput is one entry of the catalogue of bad M-Pesa input.
type badInput struct {
	name string
	// how: "callback" (through the intake, as the HTTP endpoints do),
	// "http" (through the handler), "statement" (a portal CSV file),
	// "callbacks_file" (reconcile import callbacks).
	how  string
	kind string
	body string
	// reader, when set, replaces body (for inputs too big to spell out).
	reader func() io.Reader
	field  string
	line   int
	// reason is a fragment the quarantined reason must hold.
	reason string
}

const portalHeader = "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"

// goodRow is a valid row; every bad file also holds one, which must not be
// imported.
const goodRow = "SD11AA22BB,06-02-2024 17:52:04,,Pay Bill,Completed,1000.00,,,true,Pay Bill Online,2547****0845 - PETER K,,INV-1\n"

var badInputs = []badInput{
	{name: "truncated JSON", how: "callback", kind: KindSTK, body: `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"Callb`,
		field: "body", reason: "truncated JSON"},
	{name: "not an object", how: "callback", kind: KindC2BConfirmation, body: `"hello"`, field: "body", reason: "not an object"},
	{name: "empty body", how: "callback", kind: KindSTK, body: ``, field: "body", reason: "is empty"},
	{name: "wrong type: ResultCode is an object", how: "callback", kind: KindSTK,
		body: `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":{"code":0}}}}`, field: "Body.stkCallback.ResultCode", reason: "neither a number nor a string"},
	{name: "wrong type: Item list is a string", how: "callback", kind: KindSTK,
		body: `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"CallbackMetadata":"none"}}}`, field: "Body.stkCallback.CallbackMetadata", reason: "cannot unmarshal"},
	{name: "STK missing receipt", how: "callback", kind: KindSTK,
		body:  `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1.00},{"Name":"TransactionDate","Value":20191219102115}]}}}}`,
		field: "Body.stkCallback.CallbackMetadata.Item.MpesaReceiptNumber", reason: "is missing"},
	{name: "STK amount in exponent form", how: "callback", kind: KindSTK,
		body:  `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1e2},{"Name":"MpesaReceiptNumber","Value":"NLJ7RT61SV"},{"Name":"TransactionDate","Value":20191219102115}]}}}}`,
		field: "Body.stkCallback.CallbackMetadata.Item.Amount", reason: "not a decimal number"},
	{name: "STK date in the wrong format", how: "callback", kind: KindSTK,
		body:  `{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0,"CallbackMetadata":{"Item":[{"Name":"Amount","Value":1},{"Name":"MpesaReceiptNumber","Value":"NLJ7RT61SV"},{"Name":"TransactionDate","Value":"19/12/2019 10:21"}]}}}}`,
		field: "Body.stkCallback.CallbackMetadata.Item.TransactionDate", reason: "YYYYMMDDHHmmss"},
	{name: "C2B negative amount", how: "callback", kind: KindC2BConfirmation,
		body: `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"-10.00","MSISDN":"25470****149"}`, field: "TransAmount", reason: "not positive"},
	{name: "C2B over-precise amount", how: "callback", kind: KindC2BConfirmation,
		body: `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"10.005"}`, field: "TransAmount", reason: "more decimal places"},
	{name: "C2B amount with a currency in it", how: "callback", kind: KindC2BConfirmation,
		body: `{"TransID":"RKTQDM7W6S","TransTime":"20191122063845","TransAmount":"USD 10"}`, field: "TransAmount", reason: "not a decimal number"},
	{name: "C2B missing receipt", how: "callback", kind: KindC2BConfirmation,
		body: `{"TransTime":"20191122063845","TransAmount":"10"}`, field: "TransID", reason: "is missing"},
	{name: "C2B date in the wrong format", how: "callback", kind: KindC2BConfirmation,
		body: `{"TransID":"RKTQDM7W6S","TransTime":"2019-11-22T06:38:45","TransAmount":"10"}`, field: "TransTime", reason: "YYYYMMDDHHmmss"},
	{name: "B2C missing amount", how: "callback", kind: KindB2C,
		body:  `{"Result":{"ResultCode":0,"ConversationID":"AG_1","ResultParameters":{"ResultParameter":[{"Key":"TransactionReceipt","Value":"SG632NMUAB"},{"Key":"TransactionCompletedDateTime","Value":"06.07.2024 22:48:52"}]}}}`,
		field: "Result.ResultParameters.TransactionAmount", reason: "is missing"},
	{name: "reversal with a placeholder receipt", how: "callback", kind: KindReversal,
		body:  `{"Result":{"ResultCode":0,"TransactionID":"SKE0000000","ResultParameters":{"ResultParameter":[{"Key":"OriginalTransactionID","Value":"SKC82PACB8"},{"Key":"Amount","Value":1},{"Key":"TransCompletedTime","Value":20211114132711}]}}}`,
		field: "Result.TransactionID", reason: "placeholder"},
	{name: "transaction status with an unknown status", how: "callback", kind: KindTransactionStatus,
		body:  `{"Result":{"ResultCode":0,"ResultParameters":{"ResultParameter":[{"Key":"ReceiptNo","Value":"MBN31H462N"},{"Key":"TransactionStatus","Value":"Sideways"},{"Key":"Amount","Value":"300"},{"Key":"FinalisedTime","Value":"20180223054112"}]}}}`,
		field: "Result.ResultParameters.TransactionStatus", reason: "not a known status"},
	{name: "50 MB body", how: "http", kind: KindC2BConfirmation, reader: func() io.Reader {
		return io.MultiReader(strings.NewReader(`{"TransID":"RKTQDM7W6S","BillRefNumber":"`), io.LimitReader(zeros{}, 50<<20))
	}, field: "body", reason: "larger than"},
	{name: "statement date in the wrong format", how: "statement",
		body:  portalHeader + goodRow + "SD11AA22BC,2024.02.06 17h52,,Pay Bill,Completed,10.00,,,true,Pay Bill Online,,,INV-2\n",
		field: "Completion Time", line: 3, reason: "not a time"},
	{name: "statement over-precise amount", how: "statement",
		body:  portalHeader + goodRow + "SD11AA22BC,06-02-2024 17:52:04,,Pay Bill,Completed,10.001,,,true,Pay Bill Online,,,INV-2\n",
		field: "Paid In", line: 3, reason: "more decimal places"},
	{name: "statement negative Paid In", how: "statement",
		body:  portalHeader + goodRow + "SD11AA22BC,06-02-2024 17:52:04,,Pay Bill,Completed,-10.00,,,true,Pay Bill Online,,,INV-2\n",
		field: "Paid In", line: 3, reason: "negative"},
	{name: "statement missing receipt", how: "statement",
		body:  portalHeader + goodRow + ",06-02-2024 17:52:04,,Pay Bill,Completed,10.00,,,true,Pay Bill Online,,,INV-2\n",
		field: "Receipt No.", line: 3, reason: "is missing"},
	{name: "statement unknown status", how: "statement",
		body:  portalHeader + goodRow + "SD11AA22BC,06-02-2024 17:52:04,,Pay Bill,Reconsidered,10.00,,,true,Pay Bill Online,,,INV-2\n",
		field: "Transaction Status", line: 3, reason: "not a known status"},
	{name: "statement amount with a currency in it", how: "statement",
		body:  portalHeader + goodRow + "SD11AA22BC,06-02-2024 17:52:04,,Pay Bill,Completed,USD 10.00,,,true,Pay Bill Online,,,INV-2\n",
		field: "Paid In", line: 3, reason: "not a decimal number"},
	{name: "statement receipt repeated with another amount", how: "statement",
		body:  portalHeader + goodRow + "SD11AA22BB,06-02-2024 17:52:04,,Pay Bill,Completed,999.00,,,true,Pay Bill Online,,,INV-1\n",
		field: "Receipt No.", line: 3, reason: "also on line 2"},
	{name: "statement with no header", how: "statement",
		body: "Organization Name,ACME\n" + goodRow, field: "header", reason: "no header row"},
	{name: "statement with Paid In twice", how: "statement",
		body:  strings.Replace(portalHeader, "A/C No.", "A/C No.,Paid In", 1) + strings.Replace(goodRow, "INV-1", "INV-1,1.00", 1),
		field: "Paid In", line: 1, reason: `column "Paid In" appears more than once in the header (columns 6 and 14)`},
	{name: "statement with the receipt column under two names", how: "statement",
		body:  strings.Replace(portalHeader, "A/C No.", "Receipt", 1) + goodRow,
		field: "Receipt No.", line: 1, reason: `(columns 1 "Receipt No." and 13 "Receipt")`},
	{name: "statement with Paid In renamed", how: "statement",
		body:  "Organization Name,ACME\n" + strings.Replace(portalHeader, "Paid In", "Money In", 1) + goodRow,
		field: "Paid In", line: 2, reason: "the header row lacks column(s) Paid In"},
	{name: "statement in UTF-16", how: "statement", body: utf16LE("\ufeff" + portalHeader + goodRow),
		line: 1, reason: "UTF-16 is not supported: save the file as UTF-8"},
	{name: "callbacks file in UTF-16", how: "callbacks_file", body: utf16LE("\ufeff" + `{"TransID":"SD11AA22BD","TransTime":"20240206175204","TransAmount":"1.00"}` + "\n"),
		line: 1, reason: "UTF-16 is not supported: save the file as UTF-8"},
	{name: "callbacks file with a key twice", how: "callbacks_file",
		body:  `{"TransID":"SD11AA22BD","TransTime":"20240206175204","TransAmount":"1.00","TransAmount":"1000.00"}` + "\n",
		field: "TransAmount", line: 1, reason: "duplicate key"},
	{name: "callbacks file with a truncated line", how: "callbacks_file",
		body:  `{"TransID":"SD11AA22BD","TransTime":"20240206175204","TransAmount":"1.00"}` + "\n" + `{"TransID":"SD11AA22BE","TransTime":"2024020`,
		field: "body", line: 2, reason: "truncated JSON"},
	{name: "callbacks file with a wrong type", how: "callbacks_file",
		body:  `{"TransID":"SD11AA22BD","TransTime":"20240206175204","TransAmount":"1.00"}` + "\n\n" + `{"TransID":"SD11AA22BE","TransTime":"20240206175204","TransAmount":[1]}`,
		field: "TransAmount", line: 3, reason: "neither a number nor a string"},
}

// utf16LE encodes s as UTF-16, little-endian, as spreadsheets save
// "Unicode text" (a leading U+FEFF becomes the byte-order mark).
func utf16LE(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

// TestBadInputCatalogue: every bad input is refused with an error naming the
// field (and file and line for files), nothing of it (or of the file it came
// in) is imported, and it lands in the quarantine with its reason.
func TestBadInputCatalogue(t *testing.T) {
	t.Parallel()
	if len(badInputs) < 20 {
		t.Fatalf("catalogue holds %d cases", len(badInputs))
	}
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		e := setupEnv(t, newStore, HandlerConfig{})
		for i, bi := range badInputs {
			t.Run(bi.name, func(t *testing.T) {
				ctx := context.Background()
				origin := fmt.Sprintf("case%02d.txt", i)
				errText, source := runBadInput(t, e, bi, origin)
				if errText == "" {
					t.Fatal("accepted")
				}
				if !strings.Contains(errText, bi.field) {
					t.Errorf("error %q does not name field %s", errText, bi.field)
				}
				if bi.line > 0 && !strings.Contains(errText, fmt.Sprintf("%s line %d", origin, bi.line)) {
					t.Errorf("error %q does not name %s line %d", errText, origin, bi.line)
				}
				if n := txnCount(t, e.store); n != 0 {
					t.Fatalf("%d provider transactions imported", n)
				}
				q, err := e.store.ListQuarantine(ctx, source, 200)
				if err != nil {
					t.Fatal(err)
				}
				var found *ledger.QuarantineItem
				for j := range q {
					if q[j].Field == bi.field && strings.Contains(q[j].Reason, bi.reason) &&
						(bi.how == "callback" || bi.how == "http" || q[j].Origin == origin) && (bi.line == 0 || q[j].Line == bi.line) {
						found = &q[j]
						break
					}
				}
				if found == nil {
					var seen []string
					for _, it := range q {
						seen = append(seen, fmt.Sprintf("%s line %d field %s: %s", it.Origin, it.Line, it.Field, it.Reason))
					}
					t.Fatalf("not quarantined with field %q and reason %q; quarantine holds:\n%s", bi.field, bi.reason, strings.Join(seen, "\n"))
				}
				if bi.reader == nil && bi.how != "callbacks_file" && bi.how != "statement" && string(found.Raw) != bi.body {
					t.Errorf("raw = %q", found.Raw)
				}
				if bi.how == "http" && (len(found.Raw) == 0 || len(found.Raw) > keptRefused) {
					t.Errorf("oversized raw kept %d bytes", len(found.Raw))
				}
			})
		}
	})
}

// runBadInput feeds one bad input through its real path and returns the
// error text and the quarantine source it should land in.
func runBadInput(t *testing.T, e env, bi badInput, origin string) (string, string) {
	t.Helper()
	ctx := context.Background()
	switch bi.how {
	case "callback":
		res, err := e.proc.Deliver(ctx, intake.Delivery{Provider: Provider, Parser: CallbackParser{}, Body: []byte(bi.body),
			RemoteAddr: "196.201.214.200", Kind: bi.kind})
		if err != nil {
			t.Fatalf("delivery failed: %v", err)
		}
		if res.Rejected == nil {
			return "", ""
		}
		return res.Rejected.Error(), "mpesa_callback"
	case "http":
		req := httptest.NewRequest(http.MethodPost, "/daraja/"+testToken+"/c2b/confirmation", bi.reader())
		req.RemoteAddr = "196.201.214.200:1"
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("answered %d", rec.Code)
		}
		left, _ := e.store.ListUnprocessedCallbacks(ctx, Provider, 10)
		if len(left) != 0 {
			t.Errorf("oversized body stored as a callback")
		}
		return fmt.Sprintf("HTTP %d: field body", rec.Code), "mpesa_callback"
	case "statement":
		im := &statement.Importer{Store: e.store, Clock: func() time.Time { return t0 }}
		_, err := im.Import(ctx, statement.File{Name: origin, Reader: strings.NewReader(bi.body),
			Parser: StatementParser{Clock: func() time.Time { return t0 }}, Source: "mpesa_statement"})
		var ie *ledger.RejectedFileError
		if err != nil && !errors.As(err, &ie) {
			t.Fatalf("import failed: %v", err)
		}
		if err == nil {
			return "", ""
		}
		return err.Error(), "mpesa_statement"
	case "callbacks_file":
		_, err := e.proc.ImportFile(ctx, intake.FileImport{Provider: Provider, Parser: CallbackParser{}, Name: origin,
			Data: bytes.NewReader([]byte(bi.body))})
		var fe *ledger.RejectedFileError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("import failed: %v", err)
		}
		if err == nil {
			return "", ""
		}
		return err.Error(), "mpesa_callback"
	}
	t.Fatalf("unknown path %q", bi.how)
	return "", ""
}
