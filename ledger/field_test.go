package ledger

import (
	"testing"
	"unicode/utf8"
)

func TestMaskCustomer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"254712340845":     "2547****0845",
		"2547 ***** 845":   "2547*****845",
		"jane@example.com": "j***@example.com",
		"éa@x.io":          "é***@x.io",
		"cus_Q1abc":        "cu****",
		"Ñandú":            "Ña****",
		"abc":              "****",
		"sha256:94c392c3…": "sha256:94c392c3…",
		"":                 "",
		"94c392c311d522da950619227b3361752a42042db7e1e699b26e628305c68a88": "sha256:94c392c3…",
	} {
		got := MaskCustomer(in)
		if got != want || !utf8.ValidString(got) {
			t.Errorf("MaskCustomer(%q) = %q, want %q", in, got, want)
		}
	}
}
