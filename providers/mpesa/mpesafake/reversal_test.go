package mpesafake_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

type delivered struct {
	url  string
	body map[string]map[string]any
}

func reversalBody(s *mpesafake.Server, receipt string) map[string]any {
	short, _, _, _ := s.Credentials()
	initiator, credential := s.InitiatorCredentials()
	return map[string]any{"Initiator": initiator, "SecurityCredential": credential, "CommandID": "TransactionReversal",
		"TransactionID": receipt, "Amount": 100, "ReceiverParty": short, "RecieverIdentifierType": "11",
		"ResultURL": "https://x/reversal/result", "QueueTimeOutURL": "https://x/reversal/timeout", "Remarks": "Refund"}
}

func statusBody(s *mpesafake.Server, originator, occasion string) map[string]any {
	short, _, _, _ := s.Credentials()
	initiator, credential := s.InitiatorCredentials()
	return map[string]any{"Initiator": initiator, "SecurityCredential": credential, "CommandID": "TransactionStatusQuery",
		"OriginalConversationID": originator, "PartyA": short, "IdentifierType": "4", "ResultURL": "https://x/status/result",
		"QueueTimeOutURL": "https://x/status/timeout", "Remarks": "check", "Occasion": occasion}
}

// TestReversalAPI: the fake validates reversal requests, answers with the
// documented acknowledgement, posts the timeout notice and the result as
// the outcome says, refuses a second reversal of one payment, and answers
// status queries by OriginalConversationID with the Occasion echoed.
func TestReversalAPI(t *testing.T) {
	t.Parallel()
	got := make(chan delivered, 16)
	s := mpesafake.New(mpesafake.Config{Seed: 3, Clock: clock,
		DecideReversal: func(mpesafake.Reversal, *rand.Rand) mpesafake.ReversalOutcome {
			return mpesafake.ReversalOutcome{TimedOut: true, Callback: mpesafake.DeliverTwice}
		},
		Deliver: func(_ context.Context, url string, body []byte) error {
			var m map[string]map[string]any
			if err := json.Unmarshal(body, &m); err != nil {
				return err
			}
			got <- delivered{url, m}
			return nil
		}})
	base := s.Start()
	defer s.Close()
	tok := token(t, s, base)
	ctx := context.Background()
	pay, _, err := s.AddC2B(ctx, mpesafake.C2BPayment{Amount: "100.00", BillRef: "INV-1", MSISDN: "254712340845"}, false)
	if err != nil {
		t.Fatal(err)
	}

	bad := reversalBody(s, pay.TransID)
	bad["RecieverIdentifierType"] = "4"
	if code, out := call(t, base, mpesafake.PathReversal, tok, bad); code != 400 || out["errorCode"] != "400.002.02" {
		t.Errorf("bad identifier type = %d %v", code, out)
	}
	var ids []string
	for range 2 {
		code, out := call(t, base, mpesafake.PathReversal, tok, reversalBody(s, pay.TransID))
		if code != 200 || out["ResponseCode"] != "0" || out["OriginatorConversationID"] == "" || out["ConversationID"] == "" {
			t.Fatalf("reversal = %d %v", code, out)
		}
		ids = append(ids, out["OriginatorConversationID"].(string))
	}
	if err := s.SettleReversals(ctx); err != nil {
		t.Fatal(err)
	}
	want := []struct{ url, code string }{
		{"https://x/reversal/timeout", "1"}, {"https://x/reversal/result", "0"}, {"https://x/reversal/result", "0"},
		{"https://x/reversal/timeout", "1"}, {"https://x/reversal/result", "R000001"}, {"https://x/reversal/result", "R000001"},
	}
	for i, w := range want {
		d := <-got
		code, _ := json.Marshal(d.body["Result"]["ResultCode"])
		if d.url != w.url || string(code) != w.code && string(code) != `"`+w.code+`"` ||
			d.body["Result"]["OriginatorConversationID"] != ids[i/3] {
			t.Errorf("delivery %d: %s %v", i, d.url, d.body)
		}
	}
	revs := s.Reversals()
	if len(revs) != 2 || revs[0].Delivered != 2 || revs[0].TimeoutsDelivered != 1 || revs[0].ResultCode != "0" {
		t.Errorf("reversals = %+v", revs)
	}

	if code, out := call(t, base, mpesafake.PathTransactionStatus, tok, statusBody(s, ids[0], "mine")); code != 200 || out["ResponseCode"] != "0" {
		t.Fatalf("status = %d %v", code, out)
	}
	select {
	case d := <-got:
		res := d.body["Result"]
		ref, _ := json.Marshal(res["ReferenceData"])
		params, _ := json.Marshal(res["ResultParameters"])
		if d.url != "https://x/status/result" || string(ref) != `{"ReferenceItem":{"Key":"Occasion","Value":"mine"}}` ||
			!json.Valid(params) || !strings.Contains(string(params), `"Completed"`) || !strings.Contains(string(params), revs[0].Receipt) {
			t.Errorf("status result %s %v", d.url, res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no status result")
	}
}
