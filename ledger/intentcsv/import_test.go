package intentcsv_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
)

var now = time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)

func importFile(t *testing.T, s ledger.Store, name string) (intentcsv.Result, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return intentcsv.Import(context.Background(), s, name, f, now, nil)
}

func TestImport(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := eng.New(t)
			res, err := importFile(t, s, "good.csv")
			if err != nil || res.Rows != 4 || res.Created != 3 || res.Existing != 1 {
				t.Fatalf("import = %+v, %v", res, err)
			}
			in, err := s.GetIntent(ctx, "charge:order-4471")
			if err != nil || in.State != ledger.StateSucceeded || in.Amount.String() != "KES 1500.00" ||
				in.Reference != "INV4471" || !in.UpdatedAt.Equal(time.Date(2026, 11, 2, 6, 31, 0, 0, time.UTC)) {
				t.Fatalf("intent = %+v, %v", in, err)
			}
			attempts, err := s.ListAttempts(ctx, "charge:order-4471")
			if err != nil || len(attempts) != 2 || attempts[0].ProviderRef != "ws_CO_1" || attempts[1].ProviderRef != "NLJ7RT61SV" {
				t.Fatalf("attempts = %+v, %v", attempts, err)
			}
			// Re-import changes nothing.
			res, err = importFile(t, s, "good.csv")
			if err != nil || res.Created != 0 || res.Existing != 4 {
				t.Fatalf("re-import = %+v, %v", res, err)
			}
			if attempts, _ := s.ListAttempts(ctx, "charge:order-4471"); len(attempts) != 2 {
				t.Fatalf("re-import added attempts: %+v", attempts)
			}
		})
	}
}

// TestImportRejects imports files with bad rows: exit as an error naming line
// and column, nothing imported, every rejected row quarantined.
func TestImportRejects(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := eng.New(t)
			if _, err := importFile(t, s, "good.csv"); err != nil {
				t.Fatal(err)
			}
			_, err := importFile(t, s, "bad.csv")
			var rej *ledger.RejectedFileError
			if !errors.As(err, &rej) {
				t.Fatalf("err = %v, want RejectedError", err)
			}
			want := []struct {
				line  int
				field string
				text  string
			}{
				{3, "amount", "more decimal places"},
				{4, "amount", "not a decimal number"},
				{5, "amount", "is empty"},
				{6, "status", "unknown state"},
				{7, "key", "key reused with different parameters"},
				{8, "currency", "unknown currency"},
				{9, "created_at", "RFC 3339"},
			}
			if len(rej.Problems) != len(want) {
				t.Fatalf("problems = %v", err)
			}
			for i, w := range want {
				p := rej.Problems[i]
				if p.Line != w.line || p.Field != w.field || !strings.Contains(p.Error(), w.text) || !strings.Contains(p.Error(), "bad.csv line") {
					t.Errorf("problem %d = %q (line %d field %s), want line %d field %s containing %q", i, p, p.Line, p.Field, w.line, w.field, w.text)
				}
			}
			if _, err := s.GetIntent(ctx, "charge:order-9001"); !errors.Is(err, ledger.ErrNotFound) {
				t.Fatalf("a good row of a rejected file was imported: %v", err)
			}
			q, err := s.ListQuarantine(ctx, "intents_csv", 100)
			if err != nil || len(q) != len(want) {
				t.Fatalf("quarantine = %d items, %v", len(q), err)
			}
			byLine := map[int]ledger.QuarantineItem{}
			for _, item := range q {
				byLine[item.Line] = item
			}
			if item := byLine[3]; item.Field != "amount" || !strings.Contains(string(item.Raw), "12.345") || item.Origin != "bad.csv" {
				t.Fatalf("quarantined line 3 = %+v", item)
			}
			if strings.Contains(rej.Error(), "254712340845") {
				t.Fatalf("error shows a full phone number: %v", rej)
			}
		})
	}
}

func TestImportBadHeader(t *testing.T) {
	t.Parallel()
	s := dbtest.SQLite(t)
	_, err := importFile(t, s, "unknown-column.csv")
	var rej *ledger.RejectedFileError
	if !errors.As(err, &rej) || len(rej.Problems) != 1 || rej.Problems[0].Line != 1 || rej.Problems[0].Field != "colour" {
		t.Fatalf("err = %v", err)
	}
	q, _ := s.ListQuarantine(context.Background(), "intents_csv", 10)
	if len(q) != 1 || !strings.Contains(string(q[0].Raw), "colour") {
		t.Fatalf("quarantine = %+v", q)
	}
	for _, body := range []string{"", "key,provider,amount,currency,status\n"} {
		err := func() error {
			_, err := intentcsv.Import(context.Background(), s, "x.csv", strings.NewReader(body), now, nil)
			return err
		}()
		if err == nil || !strings.Contains(err.Error(), "x.csv line 1") {
			t.Errorf("Import(%q) = %v", body, err)
		}
	}
}

// TestImportHeaderAndEncoding: a column named twice (in any case) and a
// file in UTF-16 are refused as a whole, named on line 1 and quarantined;
// a UTF-8 byte-order mark is fine.
func TestImportHeaderAndEncoding(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := eng.New(t)
			good := "key,provider,amount,currency,status,created_at\ncharge:h1,mpesa,10,KES,succeeded,2026-11-02T09:30:00Z\n"
			var le []byte
			for _, u := range utf16.Encode([]rune("\ufeff" + good)) {
				le = append(le, byte(u), byte(u>>8))
			}
			for _, tc := range []struct{ name, body, field, text string }{
				{"amount twice", "key,provider,amount,currency,status,created_at,Amount\ncharge:h1,mpesa,10,KES,succeeded,2026-11-02T09:30:00Z,99999\n",
					"amount", `column "amount" appears more than once in the header (columns 3 "amount" and 7 "Amount")`},
				{"UTF-16", string(le), "", "UTF-16 is not supported: save the file as UTF-8"},
			} {
				before, _ := s.ListQuarantine(ctx, "intents_csv", 100)
				_, err := intentcsv.Import(ctx, s, "h.csv", strings.NewReader(tc.body), now, nil)
				var rej *ledger.RejectedFileError
				if !errors.As(err, &rej) || len(rej.Problems) != 1 || rej.Problems[0].Line != 1 || rej.Problems[0].Field != tc.field ||
					!strings.Contains(err.Error(), tc.text) {
					t.Errorf("%s: %v", tc.name, err)
				}
				q, _ := s.ListQuarantine(ctx, "intents_csv", 100)
				if len(q) != len(before)+1 || q[0].Line != 1 || q[0].Origin != "h.csv" || !strings.Contains(q[0].Reason, tc.text) {
					t.Errorf("%s: quarantine %+v", tc.name, q)
				}
				if _, err := s.GetIntent(ctx, "charge:h1"); !errors.Is(err, ledger.ErrNotFound) {
					t.Errorf("%s: imported: %v", tc.name, err)
				}
			}
			if res, err := intentcsv.Import(ctx, s, "bom.csv", strings.NewReader("\ufeff"+good), now, nil); err != nil || res.Created != 1 {
				t.Errorf("with a UTF-8 byte-order mark: %+v, %v", res, err)
			}
		})
	}
}
