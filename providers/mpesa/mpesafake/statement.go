package mpesafake

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
)

// portalHeader is the organisation portal's statement header.
var portalHeader = []string{"Receipt No.", "Completion Time", "Initiation Time", "Details", "Transaction Status", "Paid In",
	"Withdrawn", "Balance", "Balance Confirmed", "Reason Type", "Other Party Info", "Linked Transaction ID", "A/C No."}

// WriteStatement writes the fake's books as an organisation portal export
// (CSV with CRLF line ends, day-first times in EAT, masked numbers, a
// running balance): what `reconcile import statement --provider mpesa`
// reads. Every payment, including those whose callback was lost, is on it.
func (s *Server) WriteStatement(w io.Writer) error {
	txns := s.Txns()
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(portalHeader); err != nil {
		return err
	}
	var balance int64 // cents
	for _, t := range txns {
		cents, err := centsOf(t.Amount)
		if err != nil {
			return fmt.Errorf("mpesafake: statement row %s: %w", t.ID, err)
		}
		balance += cents
		party := maskPhone(t.MSISDN) + " - CUSTOMER"
		when := t.At.In(EAT).Format("02-01-2006 15:04:05")
		if err := cw.Write([]string{t.ID, when, when, "Pay Bill from " + party + " Acc. " + t.BillRef, "Completed",
			formatCents(cents), "", formatCents(balance), "true", "Pay Bill Online", party, "", t.BillRef}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// centsOf reads "10", "10.5" or "10.50" as cents, without floating point.
func centsOf(amount string) (int64, error) {
	whole, frac, _ := strings.Cut(amount, ".")
	if len(frac) > 2 || whole == "" {
		return 0, fmt.Errorf("amount %q", amount)
	}
	frac += strings.Repeat("0", 2-len(frac))
	var c int64
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("amount %q", amount)
		}
		c = c*10 + int64(r-'0')
	}
	return c, nil
}

func formatCents(c int64) string { return fmt.Sprintf("%d.%02d", c/100, c%100) }

// maskPhone masks a plain number as newer exports do: 2547****0845.
func maskPhone(s string) string {
	if len(s) >= 8 && strings.Trim(s, "0123456789") == "" {
		return s[:4] + "****" + s[len(s)-4:]
	}
	return s
}
