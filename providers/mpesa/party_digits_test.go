package mpesa

import (
	"math/rand/v2"
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
