package bank_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/bank"
)

// Parse finds the format and streams the statement: each entry, then each
// statement's balances. The second statement does not add up, so it is
// rejected with a BalanceError.
func ExampleParse() {
	const file = `:20:STMT260309
:25:0100012345678
:28C:68/1
:60F:C260309KES250000,00
:61:2603090309CS1131340,00NTRFSET0309600638//FT26068ABC01
:86:MPESA SETTLEMENT 600638 08/03/2026 SFT26068X1Y2
:62F:C260309KES1381340,00
-
:20:STMT260310
:25:0100012345678
:28C:69/1
:60F:C260310KES1381340,00
:61:2603100310DS350,00NCHGNONREF//CHG26069000311
:86:LEDGER FEE FEB 2026
:62F:C260310KES1381000,00
`
	nairobi, err := time.LoadLocation("Africa/Nairobi")
	if err != nil {
		panic(err)
	}
	err = bank.Parse(strings.NewReader(file), "settlement.sta", bank.Options{Zone: nairobi}, bank.Handler{
		Entry: func(st *bank.Statement, e *bank.Entry) error {
			fmt.Println(st.ID, e.BookingDate, e.Direction, e.Amount, e.BankRef, e.Text)
			return nil
		},
		End: func(st *bank.Statement) error {
			fmt.Println(st.ID, "closing", st.Closing.Amount, "rejected", st.Totals.Rejected)
			return nil
		},
		Reject: func(perr *ledger.ParseError, raw []byte) error {
			var be *bank.BalanceError
			if errors.As(perr, &be) {
				fmt.Printf("%s line %d: off by %s (%s)\n", perr.File, perr.Line, be.Difference, raw)
			}
			return nil
		},
	})
	fmt.Println("error:", err)
	// Output:
	// STMT260309 2026-03-09 credit KES 1131340.00 FT26068ABC01 MPESA SETTLEMENT 600638 08/03/2026 SFT26068X1Y2
	// STMT260309 closing KES 1381340.00 rejected 0
	// STMT260310 2026-03-10 debit KES 350.00 CHG26069000311 LEDGER FEE FEB 2026
	// settlement.sta line 15: off by KES 10.00 (:62F:C260310KES1381000,00)
	// STMT260310 closing KES 1381000.00 rejected 1
	// error: <nil>
}
