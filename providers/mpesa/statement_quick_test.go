package mpesa

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/quicktime"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// TestIsReceiptAgreesWithThePattern: the hand-written receipt check
// accepts exactly what receiptPattern accepts.
func TestIsReceiptAgreesWithThePattern(t *testing.T) {
	t.Parallel()
	cases := []string{"", "SB0000", "SB000", "SB00000000000000000000", "SB0000000000000000000", "sb00000000", "SB0000000É",
		"SB00000000\n", "ÄB00000000", "SB 0000000", "SB-0000000"}
	r := rand.New(rand.NewPCG(9, 10))
	alphabet := "ABZ09az -_.\n\xff"
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			if r.IntN(6) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[r.IntN(36)]
			}
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := isReceipt(c), receiptPattern.MatchString(c); got != want {
			t.Fatalf("isReceipt(%q) = %v, the pattern says %v", c, got, want)
		}
	}
}

// TestFirstFieldAgreesWithFields: firstField is the first of
// strings.Fields, whatever the spaces (ASCII, Unicode, none).
func TestFirstFieldAgreesWithFields(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	pieces := []string{" ", "\t", "\n", "\v", "\u0085", "\u00a0", "\u2003", "\u3000", "A", "É", "\xff", "0", "MARY", "-"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		want := ""
		if f := strings.Fields(s); len(f) > 0 {
			want = f[0]
		}
		if got := firstField(s); got != want {
			t.Fatalf("firstField(%q) = %q, strings.Fields says %q", s, got, want)
		}
	}
}

// TestStatementTimeQuickPath: parseStatementTime, which reads the two
// common forms without the layout interpreter, agrees with parseLocal over
// statementLayouts (time and error) on random times of every form.
func TestStatementTimeQuickPath(t *testing.T) {
	t.Parallel()
	if statementLayouts[0] != quicktime.DayFirst || statementLayouts[1] != quicktime.YearFirst {
		t.Fatal("the quick path reads the first two statement layouts: keep them first")
	}
	want := "dd-mm-yyyy HH:MM:SS, yyyy-mm-dd HH:MM:SS or dd-mm-yyyy HH:MM"
	r := rand.New(rand.NewPCG(13, 14))
	base := time.Date(1995, 1, 1, 0, 0, 0, 0, EAT)
	quick := 0
	for range 50000 {
		at := base.Add(time.Duration(r.Int64N(int64(120 * 365 * 24 * time.Hour))))
		s := at.Format(statementLayouts[r.IntN(len(statementLayouts))])
		switch r.IntN(6) {
		case 0: // a field out of range or a stray byte
			b := []byte(s)
			b[r.IntN(len(b))] = "0123456789 -:/.T\xff"[r.IntN(17)]
			s = string(b)
		case 1: // doubled spaces, which parseLocal folds
			s = strings.Replace(s, " ", "  ", 1)
		}
		if _, ok := quicktime.Parse(quicktime.DayFirst, s, EAT); ok {
			quick++
		} else if _, ok := quicktime.Parse(quicktime.YearFirst, s, EAT); ok {
			quick++
		}
		got, gerr := parseStatementTime(s)
		exp, werr := parseLocal(s, statementLayouts, want)
		if !got.Equal(exp) || got.Location() != exp.Location() || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("parseStatementTime(%q) = %v, %v; parseLocal says %v, %v", s, got, gerr, exp, werr)
		}
	}
	if quick < 5000 {
		t.Fatalf("the quick path read only %d times", quick)
	}
}

// sigByDefinition is what rowSig hashes, as text.
func sigByDefinition(t ledger.ProviderTxn) string {
	return fmt.Sprintf("%s|%s|%s|%s", t.Type, t.Status, t.Amount.Text(), t.OccurredAt.Format(time.RFC3339))
}

func pow10(n int32) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// TestRowSigAgreesWithItsDefinition: two rows get the same signature
// exactly when their type, status, amount text and RFC 3339 time agree,
// whatever the amount's representation (100, 100.0, 100.00).
func TestRowSigAgreesWithItsDefinition(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(15, 16))
	txn := func() ledger.ProviderTxn {
		// n hundredths, written with 2 decimals or, when it can be, fewer.
		n := r.Int64N(7) - 3
		if r.IntN(2) == 0 {
			n *= 100
		}
		v := decimal.New(n, -2)
		if f := int32(r.IntN(3)); n%100 == 0 {
			v = decimal.New(n/100*pow10(f), -f)
		}
		switch r.IntN(10) {
		case 0: // near the maximum
			v = ledger.MaxAmount(Currency).Value.Sub(decimal.New(r.Int64N(2), -2))
		case 1: // one value, its coefficient below 10^16 or not
			v = decimal.New(1e14+r.Int64N(2), 0)
			if r.IntN(2) == 0 {
				v = decimal.New(v.CoefficientInt64()*100, -2)
			}
		}
		return ledger.ProviderTxn{Type: []ledger.TxnType{ledger.TxnCharge, ledger.TxnPayout}[r.IntN(2)],
			Status:     []ledger.TxnStatus{ledger.TxnSucceeded, ledger.TxnFailed}[r.IntN(2)],
			Amount:     money.Amount{Value: v, Currency: Currency},
			OccurredAt: time.Unix(1700000000+r.Int64N(2), r.Int64N(2)*int64(time.Millisecond)).UTC()}
	}
	same, differ := 0, 0
	for range 50000 {
		a, b := txn(), txn()
		if eq := sigByDefinition(a) == sigByDefinition(b); eq != (rowSig(a) == rowSig(b)) {
			t.Fatalf("%s and %s: equal %v, signatures %x and %x", sigByDefinition(a), sigByDefinition(b), eq, rowSig(a), rowSig(b))
		} else if eq {
			same++
		} else {
			differ++
		}
	}
	if same < 100 || differ < 100 {
		t.Fatalf("%d equal and %d different pairs: the test does not exercise both", same, differ)
	}
	// An amount beyond the maximum is hashed by its text.
	big := money.Amount{Value: decimal.RequireFromString("123456789012345678901234567890.5"), Currency: Currency}
	if _, ok := minorUnits(big); ok {
		t.Fatal("minorUnits read an amount beyond the maximum")
	}
	a := ledger.ProviderTxn{Type: ledger.TxnCharge, Amount: big}
	b := a
	b.Amount.Value = decimal.RequireFromString("123456789012345678901234567890.50")
	if rowSig(a) != rowSig(b) {
		t.Fatal("the same amount beyond the maximum has two signatures")
	}
}

// TestTypeOfRemembers: the remembered types and statuses are typeOfReason's
// and statusOf's, past the bound of what is remembered too.
func TestTypeOfRemembers(t *testing.T) {
	t.Parallel()
	st := &statementState{}
	reasons := []string{"Pay Bill Online", "Business Payment to Customer", "Reversal", "Pay Utility Charge", "Withdraw", "", "Salary Payment"}
	for i := range 3 * maxTypes {
		reasons = append(reasons, fmt.Sprintf("Reason %d", i))
	}
	for range 3 {
		for _, reason := range reasons {
			for _, paidIn := range []bool{true, false} {
				if got, want := st.typeOf(reason, paidIn), typeOfReason(reason, paidIn); got != want {
					t.Fatalf("typeOf(%q, %v) = %s, want %s", reason, paidIn, got, want)
				}
			}
		}
	}
	if len(st.types) != maxTypes {
		t.Fatalf("%d types remembered, want %d", len(st.types), maxTypes)
	}
	statuses := []string{"Completed", "completed", " Failed ", "", "Pending", "Unknown", "COMPLETED", "ſuccess", "Reversed"}
	for i := range 2 * maxTypes {
		statuses = append(statuses, fmt.Sprintf("Status %d", i))
	}
	for range 3 {
		for _, s := range statuses {
			got, gok := st.statusOf(s)
			want, wok := statusOf(s)
			if got != want || gok != wok {
				t.Fatalf("statusOf(%q) = %s, %v; want %s, %v", s, got, gok, want, wok)
			}
		}
	}
	if len(st.statuses) != maxTypes {
		t.Fatalf("%d statuses remembered, want %d", len(st.statuses), maxTypes)
	}
}

// TestGroupedAmountAgreesWithParse: amounts with thousands separators read
// straight into a decimal equal what money.Parse makes of them without
// the separators, in value, exponent and text, or are left to it.
func TestGroupedAmountAgreesWithParse(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(21, 22))
	quick := 0
	for range 50000 {
		var b strings.Builder
		switch r.IntN(4) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		b.WriteString(fmt.Sprint(1 + r.IntN(999)))
		for range 1 + r.IntN(7) {
			fmt.Fprintf(&b, ",%03d", r.IntN(1000))
		}
		if r.IntN(3) > 0 {
			b.WriteByte('.')
			for range 1 + r.IntN(4) {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		s := b.String()
		if !isGrouped(s) {
			t.Fatalf("the test made %q, which is not grouped", s)
		}
		got, gerr := statementAmount(s)
		want, werr := money.Parse(strings.ReplaceAll(s, ",", ""), Currency)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) || got.Currency != want.Currency || got.Value.Exponent() != want.Value.Exponent() ||
			got.Value.Coefficient().Cmp(want.Value.Coefficient()) != 0 || got.Text() != want.Text() {
			t.Fatalf("statementAmount(%q) = %v (exponent %d), %v; money.Parse says %v (exponent %d), %v", s, got, got.Value.Exponent(), gerr,
				want, want.Value.Exponent(), werr)
		}
		if _, ok := groupedAmount(s); ok {
			quick++
		}
	}
	if quick < 10000 {
		t.Fatalf("only %d amounts took the quick path", quick)
	}
}

// TestIsMaskedIsMaskCustomers: a number isMasked accepts is one that
// ledger.MaskCustomer leaves as it is, so counterparty skips it.
func TestIsMaskedIsMaskCustomers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 24))
	alphabet := "0123456789*** -+a@"
	masked := 0
	for range 50000 {
		n := 10 + r.IntN(5)
		b := make([]byte, n)
		for i := range b {
			switch {
			case r.IntN(8) == 0:
				b[i] = alphabet[r.IntN(len(alphabet))]
			case i >= 4 && i < 8:
				b[i] = '*'
			default:
				b[i] = byte('0' + r.IntN(10))
			}
		}
		s := string(b)
		if isMasked(s) {
			masked++
			if m := ledger.MaskCustomer(s); m != s {
				t.Fatalf("isMasked(%q), but ledger.MaskCustomer makes it %q", s, m)
			}
		}
		name := []string{"", "MARY ATIENO", " JOHN", "0712345678"}[r.IntN(4)]
		if got, want := counterparty(s, name), counterpartyByDefinition(s, name); got != want {
			t.Fatalf("counterparty(%q, %q) = %q, want %q", s, name, got, want)
		}
	}
	if masked < 2000 {
		t.Fatalf("only %d masked numbers", masked)
	}
}

// counterpartyByDefinition is counterparty masking every id.
func counterpartyByDefinition(id, name string) string {
	id = strings.TrimSpace(id)
	first := ""
	if f := strings.Fields(name); len(f) > 0 {
		first = f[0]
	}
	masked := ""
	if id != "" {
		masked = ledger.MaskCustomer(id)
	}
	switch {
	case masked != "" && first != "":
		return maskDigitRuns(masked + " - " + first)
	case masked != "":
		return maskDigitRuns(masked)
	}
	return maskDigitRuns(first)
}
