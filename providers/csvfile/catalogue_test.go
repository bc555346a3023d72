package csvfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

const bankHeader = "Transaction Ref,Value Date,Narrative,Debit,Credit,Status,Payer\n"

// goodBankRow is valid; each bad case puts a bad row before it.
const goodBankRow = "FT-GOOD,23/11/2024 14:05,INV-1,,100.00,Posted,\n"

// The catalogue of bad inputs: each names the column (or mapping field),
// the file and the line, and imports nothing of the bad row; a file that
// cannot be read as a whole imports nothing at all.
func TestCatalogueGenericCSV(t *testing.T) {
	t.Parallel()
	providerHeader := "id,created,type,amount,currency,state,reference,customer\n"
	cases := []struct {
		name  string
		m     Mapping
		data  string
		line  int
		field string
		want  string
		is    error
		whole bool
	}{
		{name: "amount not a number", m: bankMapping, data: bankHeader + "FT1,23/11/2024 14:05,INV-1,,one hundred,Posted,\n" + goodBankRow,
			line: 2, field: "Credit", is: money.ErrSyntax},
		{name: "negative debit", m: bankMapping, data: bankHeader + "FT1,23/11/2024 14:05,INV-1,-35.00,,Posted,\n" + goodBankRow,
			line: 2, field: "Debit", want: "is negative"},
		{name: "over-precise amount", m: bankMapping, data: bankHeader + "FT1,23/11/2024 14:05,INV-1,,100.005,Posted,\n" + goodBankRow,
			line: 2, field: "Credit", is: money.ErrTooPrecise},
		{name: "over-precise yen", m: providerMapping, data: providerHeader + "p1,2024-11-23T11:00:00Z,payment,1500.5,JPY,success,,\n" +
			"p2,2024-11-23T11:00:00Z,payment,1500,JPY,success,,\n", line: 2, field: "amount", is: money.ErrTooPrecise},
		{name: "unknown currency", m: providerMapping, data: providerHeader + "p1,2024-11-23T11:00:00Z,payment,10.00,KSH,success,,\n" +
			"p2,2024-11-23T11:00:00Z,payment,10.00,KES,success,,\n", line: 2, field: "currency", want: "unknown currency"},
		{name: "missing id", m: bankMapping, data: bankHeader + ",23/11/2024 14:05,INV-1,,100.00,Posted,\n" + goodBankRow,
			line: 2, field: "Transaction Ref", want: "id is empty"},
		{name: "date in the wrong format", m: bankMapping, data: bankHeader + "FT1,2024-11-23 14:05,INV-1,,100.00,Posted,\n" + goodBankRow,
			line: 2, field: "Value Date", want: `does not match the layout "02/01/2006 15:04"`},
		{name: "impossible date", m: bankMapping, data: bankHeader + "FT1,31/11/2024 14:05,INV-1,,100.00,Posted,\n" + goodBankRow,
			line: 2, field: "Value Date", want: "does not match"},
		{name: "status not in the map", m: bankMapping, data: bankHeader + "FT1,23/11/2024 14:05,INV-1,,100.00,Booked,\n" + goodBankRow,
			line: 2, field: "Status", want: `status "Booked" is not in status_map ("pending", "posted", "reversed")`},
		{name: "type not in the map", m: providerMapping, data: providerHeader + "p1,2024-11-23T11:00:00Z,chargeback,10.00,USD,success,,\n" +
			"p2,2024-11-23T11:00:00Z,payment,10.00,USD,success,,\n", line: 2, field: "type", want: `type "chargeback" is not in type_map`},
		{name: "debit and credit both set", m: bankMapping, data: bankHeader + "FT1,23/11/2024 14:05,INV-1,5.00,100.00,Posted,\n" + goodBankRow,
			line: 2, field: "Debit", want: "both debit"},
		{name: "debit and credit both empty", m: bankMapping, data: bankHeader + "FT1,23/11/2024 14:05,INV-1,,,Posted,\n" + goodBankRow,
			line: 2, field: "Credit", want: "neither debit nor credit"},
		{name: "id reused for another amount", m: bankMapping, data: bankHeader + goodBankRow + "FT-GOOD,23/11/2024 14:05,INV-1,,101.00,Posted,\n",
			line: 3, field: "Transaction Ref", want: "already used on line 2"},
		{name: "missing field", m: bankMapping, data: bankHeader + "FT1,23/11/2024 14:05,INV-1,,100.00\n" + goodBankRow,
			line: 2, want: "5 fields, the header has 7"},
		{name: "broken quoting", m: bankMapping, data: bankHeader + "FT1,23/11/2024 14:05,IN\"V-1,,100.00,Posted,\n" + goodBankRow,
			line: 2, want: "not valid CSV"},
		{name: "no header", m: bankMapping, data: strings.TrimPrefix(bankHeader+goodBankRow, bankHeader),
			line: 1, field: "mapping.id", want: `column "Transaction Ref" not in header`, whole: true},
		{name: "unknown column in the mapping", m: func() Mapping { m := bankMapping; m.Credit = "Amt"; return m }(), data: bankHeader + goodBankRow,
			line: 1, field: "mapping.credit", want: `mapping.credit: column "Amt" not in header`, whole: true, is: ErrNoColumn},
		{name: "mapped column twice in the header", m: bankMapping, data: "Transaction Ref,Value Date,Narrative,Debit,Credit,Status,Status\n" + goodBankRow,
			line: 1, field: "mapping.status", whole: true, is: ErrDuplicateColumn},
		{name: "empty file", m: bankMapping, data: "", line: 1, want: "no header row", whole: true},
		{name: "UTF-16", m: bankMapping, data: "\xfe\xff\x00" + strings.Join(strings.Split(bankHeader+goodBankRow, ""), "\x00"),
			line: 1, want: "UTF-16 is not supported: save the file as UTF-8", whole: true},
	}
	for _, tc := range cases {
		got, err := parse(t, tc.m, []byte(tc.data), "statement.csv")
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
			if len(got.rejects) != 1 || len(got.sightings) != 1 {
				t.Errorf("%s: %d rejects and %d sightings, want 1 and 1: %v", tc.name, len(got.rejects), len(got.sightings), got.rejects)
				continue
			}
			perr = got.rejects[0]
			lines := strings.Split(tc.data, "\n")
			if string(got.raws[0]) != lines[tc.line-1] {
				t.Errorf("%s: rejected raw %q, want line %d %q", tc.name, got.raws[0], tc.line, lines[tc.line-1])
			}
		}
		if perr.File != "statement.csv" || perr.Line != tc.line || perr.Field != tc.field {
			t.Errorf("%s: error at %s line %d field %q, want line %d field %q (%v)", tc.name, perr.File, perr.Line, perr.Field,
				tc.line, tc.field, perr)
		}
		if tc.want != "" && !strings.Contains(perr.Error(), tc.want) {
			t.Errorf("%s: error %q does not say %q", tc.name, perr.Error(), tc.want)
		}
		if tc.is != nil && !errors.Is(err, tc.is) && !errors.Is(perr, tc.is) {
			t.Errorf("%s: error %v is not %v", tc.name, perr, tc.is)
		}
		if msg := perr.Error(); !strings.HasPrefix(msg, "statement.csv line ") || (tc.field != "" && !strings.Contains(msg, tc.field)) {
			t.Errorf("%s: message %q does not name the file, line and field", tc.name, msg)
		}
	}
}
