package mpesa

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestMaskDigitRunsShortcut: the check that skips the regexp agrees with
// the regexp on every string, so nothing a name carries escapes masking.
func TestMaskDigitRunsShortcut(t *testing.T) {
	t.Parallel()
	cases := []string{"", "JOHN DOE", "12345678", "123456789", "a123456789b", "0712 345 678", "2547059126450",
		"١٢٣٤٥٦٧٨٩٠", "12345678x123456789", "Safaricom333"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			if r.IntN(5) == 0 {
				b[i] = ' '
			} else {
				b[i] = byte('0' + r.IntN(10))
			}
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := hasDigitRun(c, 9), digitRun.MatchString(c); got != want {
			t.Fatalf("hasDigitRun(%q) = %v, the regexp says %v", c, got, want)
		}
	}
}

// grouped is the pattern isGrouped checks by hand.
var grouped = regexp.MustCompile(`^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$`)

// TestIsGroupedAgreesWithTheRegexp: the hand-written check of thousands
// separators accepts exactly what the pattern it replaces accepts.
func TestIsGroupedAgreesWithTheRegexp(t *testing.T) {
	t.Parallel()
	cases := []string{"", "1,000", "1,000.00", "12,345,678.9", "-1,000", "+999,999", "1000", "1,00", "1,0000", ",100",
		"1,000.", "1,000.0.0", "1234,567", "1,000,00", "--1,000", "1,000 ", " 1,000", "١,٠٠٠"}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := "0123456789,.-+ "
	for range 20000 {
		b := make([]byte, r.IntN(14))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = byte('0' + r.IntN(10))
			}
		}
		cases = append(cases, string(b))
	}
	for _, c := range cases {
		if got, want := isGrouped(c), grouped.MatchString(c); got != want {
			t.Fatalf("isGrouped(%q) = %v, the pattern says %v", c, got, want)
		}
	}
}
