package mpesafake_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var clock = func() time.Time { return time.Date(2024, 2, 6, 14, 52, 0, 0, time.UTC) }

func call(t *testing.T, base, path, token string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func token(t *testing.T, s *mpesafake.Server, base string) string {
	t.Helper()
	_, _, key, secret := s.Credentials()
	req, _ := http.NewRequest(http.MethodGet, base+mpesafake.PathOAuth+"?grant_type=client_credentials", nil)
	req.SetBasicAuth(key, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   string `json:"expires_in"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.AccessToken == "" || out.ExpiresIn != "3599" {
		t.Fatalf("token = %+v, %v", out, err)
	}
	return out.AccessToken
}

func push(s *mpesafake.Server, phone string) map[string]any {
	short, pass, _, _ := s.Credentials()
	ts := clock().In(mpesafake.EAT).Format("20060102150405")
	return map[string]any{"BusinessShortCode": short, "Password": base64.StdEncoding.EncodeToString([]byte(short + pass + ts)),
		"Timestamp": ts, "TransactionType": "CustomerPayBillOnline", "Amount": 10, "PartyA": phone, "PartyB": short,
		"PhoneNumber": phone, "CallBackURL": "https://x/stk", "AccountReference": "REF1", "TransactionDesc": "Pay"}
}

// TestDeterministic: the same seed and requests give the same ids and
// receipts.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	run := func() []string {
		var got []string
		var mu sync.Mutex
		s := mpesafake.New(mpesafake.Config{Seed: 42, Clock: clock, Decide: mpesafake.Mixed,
			Deliver: func(_ context.Context, _ string, body []byte) error {
				mu.Lock()
				got = append(got, string(body))
				mu.Unlock()
				return nil
			}})
		base := s.Start()
		defer s.Close()
		tok := token(t, s, base)
		for range 6 {
			if code, out := call(t, base, mpesafake.PathSTKPush, tok, push(s, "254712345678")); code != 200 || out["ResponseCode"] != "0" {
				t.Fatalf("push = %d %v", code, out)
			}
		}
		if err := s.SettleAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, p := range s.Pushes() {
			got = append(got, p.CheckoutRequestID+" "+p.Receipt)
		}
		return got
	}
	a, b := run(), run()
	if strings.Join(a, "\n") != strings.Join(b, "\n") || len(a) < 6 {
		t.Fatalf("runs differ:\n%v\n%v", a, b)
	}
}

func TestDocumentedAnswers(t *testing.T) {
	t.Parallel()
	s := mpesafake.New(mpesafake.Config{Seed: 1, Clock: clock, Decide: mpesafake.Script(mpesafake.Outcome{ResultCode: mpesafake.ResultCancelled}),
		Deliver: func(context.Context, string, []byte) error { return nil }})
	base := s.Start()
	defer s.Close()
	if code, out := call(t, base, mpesafake.PathSTKPush, "nope", push(s, "254712345678")); code != 401 || out["errorCode"] != "404.001.03" {
		t.Errorf("bad token = %d %v", code, out)
	}
	tok := token(t, s, base)
	bad := push(s, "254712345678")
	bad["PhoneNumber"] = "0712"
	if code, out := call(t, base, mpesafake.PathSTKPush, tok, bad); code != 400 || out["errorCode"] != "400.002.02" {
		t.Errorf("bad phone = %d %v", code, out)
	}
	bad = push(s, "254712345678")
	bad["Password"] = "x"
	if code, out := call(t, base, mpesafake.PathSTKPush, tok, bad); code != 500 || out["errorCode"] != "500.001.1001" {
		t.Errorf("bad password = %d %v", code, out)
	}
	_, out := call(t, base, mpesafake.PathSTKPush, tok, push(s, "254712345678"))
	id := out["CheckoutRequestID"].(string)
	q := map[string]any{"BusinessShortCode": bad["BusinessShortCode"], "Password": push(s, "")["Password"], "Timestamp": push(s, "")["Timestamp"], "CheckoutRequestID": id}
	if code, out := call(t, base, mpesafake.PathSTKQuery, tok, q); code != 500 || out["errorMessage"] != "The transaction is being processed" {
		t.Errorf("open prompt = %d %v", code, out)
	}
	if err := s.Settle(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if code, out := call(t, base, mpesafake.PathSTKQuery, tok, q); code != 200 || out["ResultCode"] != "1032" {
		t.Errorf("cancelled = %d %v", code, out)
	}
	s.Inject(mpesafake.PathSTKQuery, mpesafake.Fault{Status: 500, ErrorCode: "500.003.02", ErrorMessage: "Spike Arrest Violation", Times: 2})
	for range 2 {
		if code, out := call(t, base, mpesafake.PathSTKQuery, tok, q); code != 500 || out["errorCode"] != "500.003.02" {
			t.Errorf("fault = %d %v", code, out)
		}
	}
	if code, _ := call(t, base, mpesafake.PathSTKQuery, tok, q); code != 200 {
		t.Errorf("after the fault: %d", code)
	}
}

func TestAutoSettle(t *testing.T) {
	t.Parallel()
	got := make(chan []byte, 4)
	s := mpesafake.New(mpesafake.Config{Seed: 1, AutoSettle: 10 * time.Millisecond,
		Decide:  mpesafake.Script(mpesafake.Outcome{Callback: mpesafake.DeliverTwice}),
		Deliver: func(_ context.Context, _ string, body []byte) error { got <- body; return nil }})
	base := s.Start()
	defer s.Close()
	tok := token(t, s, base)
	call(t, base, mpesafake.PathSTKPush, tok, push(s, "254712345678"))
	for range 2 {
		select {
		case b := <-got:
			if !bytes.Contains(b, []byte(`"MpesaReceiptNumber"`)) {
				t.Errorf("callback %s", b)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no callback")
		}
	}
}

func TestWriteStatement(t *testing.T) {
	t.Parallel()
	s := mpesafake.New(mpesafake.Config{Seed: 9, Clock: clock})
	ctx := context.Background()
	for _, amt := range []string{"1000", "2.5", "15.75"} {
		if _, _, err := s.AddC2B(ctx, mpesafake.C2BPayment{Amount: amt, BillRef: "INV-" + amt, MSISDN: "254712340845"}, false); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := s.WriteStatement(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\r\n"), "\r\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "Receipt No.,Completion Time") {
		t.Fatalf("statement:\n%s", b.String())
	}
	if !strings.Contains(lines[2], ",2.50,,1002.50,") || strings.Contains(b.String(), "254712340845") {
		t.Errorf("row = %s", lines[2])
	}
}
