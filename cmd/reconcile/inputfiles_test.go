package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/reconcilehq/reconcile/ledger"
)

// utf16File encodes s as UTF-16 with its byte-order mark, as a spreadsheet
// saves "Unicode text".
func utf16File(s string, bigEndian bool) []byte {
	units := utf16.Encode([]rune(s))
	out := make([]byte, 0, 2+2*len(units))
	if bigEndian {
		out = append(out, 0xfe, 0xff)
	} else {
		out = append(out, 0xff, 0xfe)
	}
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// TestFileEncodings: every file reader refuses a UTF-16 file with a reason
// that says what to do, and keeps taking a UTF-8 byte-order mark.
func TestFileEncodings(t *testing.T) {
	t.Parallel()
	inputEngines(t, func(t *testing.T, e hostileEnv) {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, []byte(bankConfig), 0o600); err != nil {
			t.Fatal(err)
		}
		good := badInput{name: "good"}
		for _, f := range []struct {
			name string
			data []byte
			args []string
		}{
			{"intents csv", intentsCSV(t, good), []string{"import", "intents"}},
			{"mpesa statement", mpesaStatement(t, good), []string{"import", "statement", "--provider", "mpesa"}},
			{"stripe report", stripeReport(t, good), []string{"import", "statement", "--provider", "stripe"}},
			{"configured csv statement", bankStatement(t, good), []string{"import", "statement", "--provider", "bank", "--config", cfg}},
			{"callbacks file", append(c2bBody(good), '\n'), []string{"import", "callbacks", "--provider", "mpesa"}},
		} {
			for _, be := range []bool{false, true} {
				intents, txns := e.books(t)
				refused, said := cliFile(t, e, utf16File(string(f.data), be), f.args...)
				if !refused || !strings.Contains(said, "UTF-16 is not supported: save the file as UTF-8") {
					t.Errorf("%s in UTF-16 (big-endian %v): refused %v: %s", f.name, be, refused, ledger.SafeText(said, 300))
				}
				if i, x := e.books(t); i != intents || x != txns {
					t.Errorf("%s in UTF-16: the books changed", f.name)
				}
			}
			if refused, said := cliFile(t, e, append([]byte("\xef\xbb\xbf"), f.data...), f.args...); refused {
				t.Errorf("%s with a UTF-8 byte-order mark refused: %s", f.name, said)
			}
		}
	})
}

// TestStatementHeaders: a portal statement naming a column twice, or
// lacking a required one under its usual name, is refused with the column
// named.
func TestStatementHeaders(t *testing.T) {
	t.Parallel()
	inputEngines(t, func(t *testing.T, e hostileEnv) {
		header := "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed," +
			"Reason Type,Other Party Info,Linked Transaction ID,A/C No.,Paid In\n"
		row := "SB62A1SVRK,06-02-2024 17:52:04,06-02-2024 17:52:04,Pay Bill,Completed,1000.00,,16100.00,true,Pay Bill Online,,,INV-1001,1.00\n"
		refused, said := cliFile(t, e, []byte(header+row), "import", "statement", "--provider", "mpesa")
		if !refused || !strings.Contains(said, `line 1: field Paid In: column "Paid In" appears more than once in the header (columns 6 and 14)`) {
			t.Errorf("Paid In twice: %v %s", refused, said)
		}
		if i, x := e.books(t); i != 0 || x != 0 {
			t.Errorf("Paid In twice: %d intents, %d transactions", i, x)
		}
		renamed := strings.Replace(string(mpesaStatement(t, badInput{name: "good"})), "Paid In", "Money In", 1)
		refused, said = cliFile(t, e, []byte("Organization Name,ACME\n"+renamed), "import", "statement", "--provider", "mpesa")
		if !refused || !strings.Contains(said, "line 2: field Paid In: the header row lacks column(s) Paid In") {
			t.Errorf("Paid In renamed: %v %s", refused, said)
		}
	})
}

// TestIntentsCSVProviderCurrency: the intents file refuses what the API
// refuses, an M-Pesa intent in another currency than KES, row by row,
// quarantined with the file, line and field.
func TestIntentsCSVProviderCurrency(t *testing.T) {
	t.Parallel()
	inputEngines(t, func(t *testing.T, e hostileEnv) {
		data := csvOf(t, []string{"key", "provider", "amount", "currency", "status", "created_at"},
			[]string{"k-kes", "mpesa", "10", "KES", "succeeded", "2024-02-06T09:00:00Z"},
			[]string{"k-usd", "mpesa", "10", "USD", "succeeded", "2024-02-06T09:00:00Z"},
			[]string{"k-stripe", "stripe", "10", "USD", "succeeded", "2024-02-06T09:00:00Z"})
		before := len(e.quarantine(t))
		refused, said := cliFile(t, e, data, "import", "intents")
		if !refused || !strings.Contains(said, "line 3: field currency: M-Pesa moves only KES, not USD") {
			t.Errorf("mpesa in USD: %v %s", refused, said)
		}
		q := newQuarantine(t, e, before)
		if len(q) != 1 || q[0].Source != "intents_csv" || q[0].Line != 3 || q[0].Field != "currency" || !strings.HasSuffix(q[0].Origin, "in.csv") {
			t.Errorf("quarantined %+v", q)
		}
		if i, _ := e.books(t); i != 0 {
			t.Errorf("%d intents imported", i)
		}

		req := httptest.NewRequest(http.MethodPost, "/v1/intents",
			strings.NewReader(`{"provider":"mpesa","amount":"10","currency":"USD","customer":"254712340845"}`))
		req.Header.Set("Authorization", "Bearer tok_test_123456")
		req.Header.Set("Idempotency-Key", "k-api-usd")
		if code, said := e.serve(req); code != http.StatusUnprocessableEntity ||
			!strings.Contains(said, `{"field":"currency","message":"M-Pesa moves only KES, not USD"}`) {
			t.Errorf("API: %d %s", code, said)
		}
	})
}
