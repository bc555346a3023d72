package mpesa

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

func setupPuller(t *testing.T, pageSize int) (*mpesafake.Server, *Puller, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2024, 2, 7, 12, 0, 0, 0, time.UTC)}
	fake := mpesafake.New(mpesafake.Config{Seed: 3, Clock: clock.Now, PageSize: pageSize})
	base := fake.Start()
	t.Cleanup(fake.Close)
	short, _, key, secret := fake.Credentials()
	p, err := NewPuller(Config{BaseURL: base, ShortCode: short, ConsumerKey: key, ConsumerSecret: secret, Clock: clock.Now},
		PullConfig{NominatedNumber: "254708374149", CallbackURL: "https://pay.example.com/daraja/tok/pull"})
	if err != nil {
		t.Fatal(err)
	}
	return fake, p, clock
}

func TestPullPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake, p, clock := setupPuller(t, 2)
	if _, err := p.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Register(ctx); err != nil {
		t.Fatalf("second registration (1001) must succeed: %v", err)
	}
	start := clock.Now().Add(-30 * time.Hour)
	for i := range 5 {
		if _, _, err := fake.AddC2B(ctx, mpesafake.C2BPayment{At: start.Add(time.Duration(i) * time.Hour), Amount: fmt.Sprintf("%d.50", 100+i),
			BillRef: fmt.Sprintf("INV-%d", i), MSISDN: "254712340845"}, false); err != nil {
			t.Fatal(err)
		}
	}
	// Outside the window.
	if _, _, err := fake.AddC2B(ctx, mpesafake.C2BPayment{At: clock.Now().Add(-time.Hour), Amount: "1"}, false); err != nil {
		t.Fatal(err)
	}
	var got []providers.Sighting
	err := p.Pull(ctx, start, start.Add(5*time.Hour), func(s providers.Sighting) error { got = append(got, s); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("got %d sightings, want 5", len(got))
	}
	// 5 records in pages of 2: offsets 0, 2, 4, then an empty page.
	if n := fake.Requests(mpesafake.PathPullQuery); n != 4 {
		t.Errorf("queries = %d, want 4", n)
	}
	for i, s := range got {
		tx := s.Txn
		if tx.Type != ledger.TxnCharge || tx.Status != ledger.TxnSucceeded || tx.Amount.Text() != fmt.Sprintf("%d.50", 100+i) ||
			!tx.OccurredAt.Equal(start.Add(time.Duration(i)*time.Hour)) || tx.Reference != fmt.Sprintf("INV-%d", i) ||
			tx.Counterparty != "2547****0845" {
			t.Errorf("sighting %d = %+v", i, tx)
		}
		if s.Source.Channel != "pull" || s.Source.Ref != "pull:"+tx.ID || len(s.Source.Raw) == 0 {
			t.Errorf("source = %+v", s.Source)
		}
	}
}

func TestPullWindowLimit(t *testing.T) {
	t.Parallel()
	_, p, clock := setupPuller(t, 10)
	err := p.Pull(context.Background(), clock.Now().Add(-49*time.Hour), clock.Now(), func(providers.Sighting) error { return nil })
	if !errors.Is(err, ErrPullWindow) {
		t.Fatalf("err = %v, want ErrPullWindow", err)
	}
}

func TestPullEnvelopes(t *testing.T) {
	t.Parallel()
	rec := `{"transactionId":"OEI2AK4Q16","trxDate":"2020-08-05T10:13:00Z","msisdn":722000000,"sender":"UAT2","transactiontype":"c2b-pay-bill-debit","billreference":"","amount":"233.8","organizationname":"Daraja Pull API Test"}`
	cases := map[string]struct {
		body string
		n    int
		code string
	}{
		"nested array":   {`{"ResponseRefID":"1","ResponseCode":"1000","ResponseMessage":"Success","Response":[[` + rec + `]]}`, 1, "1000"},
		"flat array":     {`{"ResponseCode":"1000","Transactions":[` + rec + `,` + rec + `]}`, 2, "1000"},
		"string of json": {`{"ResponseCode":1000,"Transaction":"[[` + escape(rec) + `]]"}`, 1, "1000"},
		"none":           {`{"ResponseCode":"1001","ResponseMessage":"No transactions","Transaction":"[[]]"}`, 0, "1001"},
		"lower-case key": {`{"ResponseCode":"1000","response":[` + rec + `]}`, 1, "1000"},
		"no list at all": {`{"ResponseCode":"1001"}`, 0, "1001"},
		"null list":      {`{"ResponseCode":"1000","Response":null}`, 0, "1000"},
	}
	for name, tc := range cases {
		got, code, err := pullRecords([]byte(tc.body))
		if err != nil || len(got) != tc.n || code != tc.code {
			t.Errorf("%s: %d records, code %q, %v", name, len(got), code, err)
		}
	}
	if _, _, err := pullRecords([]byte(`{"Response":5}`)); err == nil {
		t.Error("a number as the list was accepted")
	}
	s, perr := ParsePullRecord([]byte(rec), 1, received)
	if perr != nil {
		t.Fatal(perr)
	}
	if s.Txn.ID != "OEI2AK4Q16" || s.Txn.Amount.Text() != "233.80" || s.Txn.OccurredAt.Format(time.RFC3339) != "2020-08-05T10:13:00Z" {
		t.Errorf("record = %+v", s.Txn)
	}
	// A zoneless trxDate is EAT.
	s, perr = ParsePullRecord([]byte(`{"transactionId":"OEI2AK4Q17","trxDate":"2020-08-05 13:13:00","transactiontype":"c2b-buy-goods-debit","amount":1}`), 1, received)
	if perr != nil || s.Txn.OccurredAt.Format(time.RFC3339) != "2020-08-05T10:13:00Z" {
		t.Errorf("EAT record = %+v, %v", s.Txn, perr)
	}
	// A record naming its amount twice is refused with the key, not
	// read as its last value.
	_, perr = ParsePullRecord([]byte(`{"transactionId":"OEI2AK4Q17","trxDate":"2020-08-05 13:13:00","transactiontype":"c2b-buy-goods-debit","amount":1,"Amount":1000}`), 1, received)
	if perr == nil || perr.Field != "Amount" || !strings.Contains(perr.Error(), "duplicate key") {
		t.Errorf("amount twice: %v", perr)
	}
}

func escape(s string) string {
	out := make([]byte, 0, len(s))
	for i := range len(s) {
		if s[i] == '"' {
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func TestPullBadRecords(t *testing.T) {
	t.Parallel()
	bad := `{"ResponseCode":"1000","Response":[[{"transactionId":"OEI2AK4Q16","trxDate":"2020-08-05T10:13:00Z","transactiontype":"c2b-pay-bill-debit","amount":"23.381"},{"transactionId":"OEI2AK4Q18","trxDate":"yesterday","transactiontype":"c2b-pay-bill-debit","amount":"1"},{"transactionId":"OEI2AK4Q19","trxDate":"2020-08-05T10:13:00Z","transactiontype":"c2b-pay-bill-debit","amount":"5"}]]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == mpesafake.PathOAuth {
			_, _ = w.Write([]byte(`{"access_token":"t","expires_in":"3599"}`))
			return
		}
		_, _ = w.Write([]byte(bad))
	}))
	defer srv.Close()
	clock := func() time.Time { return time.Date(2020, 8, 6, 0, 0, 0, 0, time.UTC) }
	var rejected []*ledger.ParseError
	p, err := NewPuller(Config{BaseURL: srv.URL, ShortCode: "600000", ConsumerKey: "k", ConsumerSecret: "s", Clock: clock},
		PullConfig{OnReject: func(_ context.Context, pe *ledger.ParseError, _ []byte) error {
			rejected = append(rejected, pe)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = p.Pull(context.Background(), clock().Add(-24*time.Hour), clock(), func(s providers.Sighting) error {
		got = append(got, s.Txn.ID)
		return nil
	})
	if err != nil || len(got) != 1 || got[0] != "OEI2AK4Q19" {
		t.Fatalf("pull = %v, %v", got, err)
	}
	if len(rejected) != 2 || rejected[0].Field != "amount" || rejected[0].Line != 1 || rejected[1].Field != "trxDate" || rejected[1].Line != 2 {
		t.Errorf("rejected = %v", rejected)
	}
	// Without a reject hook a bad record fails the pull, naming it.
	p2, _ := NewPuller(Config{BaseURL: srv.URL, ShortCode: "600000", ConsumerKey: "k", ConsumerSecret: "s", Clock: clock}, PullConfig{})
	err = p2.Pull(context.Background(), clock().Add(-24*time.Hour), clock(), func(providers.Sighting) error { return nil })
	var pe *ledger.ParseError
	if !errors.As(err, &pe) || pe.Field != "amount" {
		t.Errorf("err = %v", err)
	}
}
