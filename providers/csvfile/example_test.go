package csvfile_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/csvfile"
)

func ExampleNewParser() {
	m := csvfile.Mapping{
		Provider: "equity-bank", ID: "Ref", Time: "Date", TimeFormat: "02/01/2006 15:04", Zone: "Africa/Nairobi",
		Debit: "Debit", Credit: "Credit", ThousandsSeparator: ",", FixedCurrency: "KES", Reference: "Narrative",
	}
	p, err := csvfile.NewParser(m, func() time.Time { return time.Date(2024, 11, 25, 0, 0, 0, 0, time.UTC) })
	if err != nil {
		fmt.Println(err)
		return
	}
	statement := "Ref,Date,Narrative,Debit,Credit\n" +
		"FT1,23/11/2024 14:05,INV-1001,,\"1,500.00\"\n" +
		"FT2,23/11/2024 18:30,Bank charges,35.001,\n"
	err = p.ParseStatement(strings.NewReader(statement), "november.csv",
		func(s providers.Sighting) error {
			x := s.Txn
			fmt.Println(x.Type, x.ID, x.Amount, x.OccurredAt.Format(time.RFC3339), x.Reference)
			return nil
		},
		func(perr *ledger.ParseError, raw []byte) error {
			fmt.Println("rejected:", perr)
			return nil
		})
	fmt.Println("error:", err)
	// Output:
	// charge FT1 KES 1500.00 2024-11-23T11:05:00Z INV-1001
	// rejected: november.csv line 3: field Debit: 35.001 in KES (at most 2): more decimal places than the currency allows
	// error: <nil>
}
