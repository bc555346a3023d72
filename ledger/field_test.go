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

func TestMaskMSISDNs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"254712340845":                          "2547****0845",
		"ws_CO_26052024101530254712340845":      "ws_CO_260520241015302547****0845",
		"provider_ref=ws_CO_191220191020363925": "provider_ref=ws_CO_191220191020363925",
		"call 0712340845 now":                   "call 071****845 now",
		"+254112340845":                         "+2541****0845",
		"SB62A1SVRK":                            "SB62A1SVRK",
		"amount 1500.00":                        "amount 1500.00",
		"a 2547****0845 already masked":         "a 2547****0845 already masked",
		"":                                      "",
	} {
		if got := MaskMSISDNs(in); got != want {
			t.Errorf("MaskMSISDNs(%q) = %q, want %q", in, got, want)
		}
	}
}
