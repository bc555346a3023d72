package ledger

import "testing"

func TestMaskPayload(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"MSISDN":"254712340845","TransAmount":"1500.00"}`:   `{"MSISDN":"2547****0845","TransAmount":"1500.00"}`,
		`{"phone":"+254712340845"}`:                           `{"phone":"2547****0845"}`,
		`{"email":"jane.doe@example.com"}`:                    `{"email":"j***@example.com"}`,
		`card 4242424242424242 ok`:                            `card 4242********4242 ok`,
		`{"TransID":"SKL1AAAA01","BillRefNumber":"12345678"}`: `{"TransID":"SKL1AAAA01","BillRefNumber":"12345678"}`,
	} {
		if got := MaskPayload([]byte(in)); got != want {
			t.Errorf("MaskPayload(%s) = %s, want %s", in, got, want)
		}
	}
}
