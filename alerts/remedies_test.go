package alerts

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

// remedyDialogPayload is the form Slack posts when user submits a remedy
// or rejection dialog.
func remedyDialogPayload(user, name, viewID, callback, meta, amount, note string) string {
	values := map[string]any{noteBlockID: map[string]any{noteActionID: map[string]any{"type": "plain_text_input", "value": note}}}
	if amount != "" {
		values[amountBlockID] = map[string]any{amountActionID: map[string]any{"type": "plain_text_input", "value": amount}}
	}
	b, _ := json.Marshal(map[string]any{
		"type": "view_submission", "team": map[string]any{"id": "T0TEAM"},
		"user": map[string]any{"id": user, "name": name, "username": name, "team_id": "T0TEAM"},
		"view": map[string]any{"id": viewID, "type": "modal", "callback_id": callback, "private_metadata": meta,
			"hash": "1714629600.abc", "state": map[string]any{"values": values}},
	})
	return string(b)
}

// TestRemediesInSlack: a duplicate charge's message offers Refund…; its
// dialog asks for the refund, which above the threshold is posted as a
// request with Approve and Reject…; the requester's own approval is
// refused and changes nothing; another person's, delivered twice, creates
// the refund once; the request's message loses its buttons and the
// decision follows in its thread. Messages and dialogs are golden.
func TestRemediesInSlack(t *testing.T) {
	t.Parallel()
	for _, engine := range dbtest.Engines() {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setupDelivery(t, engine.New(t), ModeBot, func(c *Config) {
				c.Buttons = true
				c.FindingsURL = "https://reconcile.example.com/console/findings"
			})
			dup, _, _ := fixtureFindings(t)
			// The charge and its two payments, as the run saw them.
			if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: dup.IntentKey, Provider: "mpesa",
				Amount: kes(t, "1500.00")}, State: ledger.StateSucceeded, CreatedAt: dup.OccurredAt}); err != nil {
				t.Fatal(err)
			}
			for i, id := range []string{"SE41XYZ123", "SE41XYZ124"} {
				if _, err := b.store.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge,
					Status: ledger.TxnSucceeded, Amount: kes(t, "1500.00"), OccurredAt: dup.OccurredAt.Add(time.Duration(i) * time.Minute)},
					ledger.Source{Channel: "statement", Ref: id, ReceivedAt: dup.OccurredAt}); err != nil {
					t.Fatal(err)
				}
			}
			planned := b.rec.run(dup)
			b.drain(t, ids(planned), 1)
			var msg alertstest.Post
			for _, p := range b.bot.Posts() {
				if strings.Contains(string(p.Blocks), `"action_id":"reconcile_remedy"`) {
					msg = p
				}
			}
			if msg.TS == "" {
				t.Fatalf("no finding message offers a refund: %+v", b.bot.Posts())
			}

			q, err := queue.New(b.store, queue.Config{})
			if err != nil {
				t.Fatal(err)
			}
			payments := charge.New(charge.Deps{Store: b.store, Clock: b.clock.Now}, charge.Config{})
			payments.UseQueue(q)
			var pending []ledger.Alert
			_, announceRemedy := b.rec.planner.Announcers(func(_ context.Context, _ ledger.Tx, as []ledger.Alert) error {
				pending = append(pending, as...)
				return nil
			})
			svc := findings.NewService(b.store, findings.Options{Clock: b.clock.Now, Payments: payments,
				Approvals:      findings.Approvals{Thresholds: map[string]decimal.Decimal{"KES": decimal.NewFromInt(1000)}},
				AnnounceRemedy: announceRemedy})
			h, err := NewInteractions(InteractionsConfig{SigningSecret: testSigningSecret, AllowedUsers: []string{"U0ALICE", "U0BOB"},
				Alerts: b.cfg, Store: b.store, Clock: b.clock.Now, HTTPClient: testHTTPClient(t), Findings: svc})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle("POST /slack/interactions", h)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			send := func(payload string, retry int) string {
				t.Helper()
				r := slackRequest(t, srv.URL, testSigningSecret, time.Now(), payload, retry)
				body, _ := io.ReadAll(r.Body)
				if r.StatusCode != http.StatusOK {
					t.Fatalf("interaction: %d %s", r.StatusCode, body)
				}
				return string(body)
			}
			deliver := func() {
				t.Helper()
				b.drain(t, ids(pending), 2)
				pending = nil
			}

			// Alice opens the refund dialog and asks for the refund.
			value := buttonRef{Alert: msgAlert(t, msg), Finding: dup.ID, Verb: string(findings.Refund)}.encode()
			send(blockActionPayload("U0ALICE", "alice", msg.Channel, msg.TS, actionRemedy, value, "1714629800.000100"), 0)
			views := b.bot.Views()
			if len(views) != 1 {
				t.Fatalf("views %+v", views)
			}
			golden.AssertJSON(t, "testdata/remedy.refund.view.json", views[0].View)
			var view struct {
				PrivateMetadata string `json:"private_metadata"`
				CallbackID      string `json:"callback_id"`
			}
			if err := json.Unmarshal(views[0].View, &view); err != nil {
				t.Fatal(err)
			}
			if body := send(remedyDialogPayload("U0ALICE", "alice", "V1", view.CallbackID, view.PrivateMetadata, "1500.001", "paid twice"), 0); !strings.Contains(body, `"amount"`) {
				t.Fatalf("a bad amount: %s", body)
			}
			if body := send(remedyDialogPayload("U0ALICE", "alice", "V2", view.CallbackID, view.PrivateMetadata, "", "paid twice"), 0); body != "" {
				t.Fatalf("refund dialog: %s", body)
			}
			rs, err := b.store.ListRemedies(ctx, ledger.RemedyFilter{FindingIDs: []string{dup.ID}})
			if err != nil || len(rs) != 1 || rs[0].Status != ledger.RemedyAwaitingApproval || rs[0].RequestedBy != "@alice (U0ALICE)" || rs[0].TxnID != "SE41XYZ124" {
				t.Fatalf("request %+v, %v", rs, err)
			}
			if e := b.bot.Ephemerals(); len(e) != 1 || !strings.Contains(e[0].Text, "awaits another operator's approval") {
				t.Fatalf("ephemerals %+v", e)
			}
			deliver()
			var req alertstest.Post
			for _, p := range b.bot.Posts() {
				if strings.Contains(string(p.Blocks), `"action_id":"reconcile_approve"`) {
					req = p
				}
			}
			if req.TS == "" {
				t.Fatalf("no request message: %+v", b.bot.Posts())
			}
			golden.AssertJSON(t, "testdata/request.opened.blocks.json", req.Blocks)
			approve := buttonRef{Alert: msgAlert(t, req), Finding: dup.ID, Request: rs[0].ID}.encode()

			// Alice approves her own request: refused, nothing changes.
			send(blockActionPayload("U0ALICE", "alice", req.Channel, req.TS, actionApprove, approve, "1714629900.000100"), 0)
			if e := b.bot.Ephemerals(); len(e) != 2 || !strings.Contains(e[1].Text, "another operator must approve it") {
				t.Fatalf("self-approval: %+v", e)
			}
			if r, _ := b.store.GetRemedy(ctx, rs[0].ID); r.Status != ledger.RemedyAwaitingApproval {
				t.Fatalf("after a self-approval: %s", r.Status)
			}
			// Bob approves; Slack delivers it twice.
			press := blockActionPayload("U0BOB", "bob", req.Channel, req.TS, actionApprove, approve, "1714629960.000100")
			send(press, 0)
			send(press, 1)
			r, err := b.store.GetRemedy(ctx, rs[0].ID)
			if err != nil || r.Status != ledger.RemedyApplied || r.DecidedBy != "@bob (U0BOB)" || r.DecidedVia != ledger.SurfaceSlack {
				t.Fatalf("approved %+v, %v", r, err)
			}
			if in, err := b.store.GetIntent(ctx, r.RefundKey); err != nil || in.Metadata[ledger.MetaChargeTxn] != "SE41XYZ124" {
				t.Fatalf("refund %+v, %v", in, err)
			}
			redrawn, _ := postAt(b.bot, req.Channel, req.TS)
			if strings.Contains(string(redrawn.Blocks), "reconcile_approve") || !strings.Contains(string(redrawn.Blocks), "*Approved* by @bob (U0BOB) in Slack") {
				t.Fatalf("request after approval: %s", redrawn.Blocks)
			}
			deliver()
			var reply alertstest.Post
			for _, p := range b.bot.Posts() {
				if p.ThreadTS == req.TS {
					reply = p
				}
			}
			if !strings.Contains(reply.Text, "approved by @bob (U0BOB) and carried out") {
				t.Fatalf("no follow-up in the request's thread: %+v", b.bot.Posts())
			}
			final, _ := postAt(b.bot, req.Channel, req.TS)
			golden.AssertJSON(t, "testdata/request.approved.blocks.json", final.Blocks)
			// The finding's history says it all, once.
			evs, err := b.store.FindingHistory(ctx, dup.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range evs {
				got = append(got, string(ev.Action)+" "+ev.Who())
			}
			want := "opened run 1|requested @alice (U0ALICE)|approved @bob (U0BOB)|refund_created @bob (U0BOB)"
			if strings.Join(got, "|") != want {
				t.Fatalf("history %q, want %q", strings.Join(got, "|"), want)
			}
			checkNoSecrets(t, b)
		})
	}
}

// msgAlert is the alert id a posted message carries in its metadata.
func msgAlert(t *testing.T, p alertstest.Post) int64 {
	t.Helper()
	n, err := strconv.ParseInt(p.AlertID, 10, 64)
	if err != nil {
		t.Fatalf("post %+v carries no alert id", p)
	}
	return n
}

// postAt is the post at channel and ts.
func postAt(bot *alertstest.Bot, channel, ts string) (alertstest.Post, bool) {
	for _, p := range bot.Posts() {
		if p.Channel == channel && p.TS == ts {
			return p, true
		}
	}
	return alertstest.Post{}, false
}
