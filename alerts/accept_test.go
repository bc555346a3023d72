package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// typoPair stores a payment whose payer typed the account number wrong:
// intent key (KES 1,500.00, reference ref) and charge txn (the same amount,
// reference typed) with its unknown_charge and the intent's
// missing_at_provider, each suggesting the other.
func typoPair(t *testing.T, s ledger.Store, key, ref, txn, typed string, amt money.Amount) (unknown, missing ledger.Finding) {
	t.Helper()
	ctx := context.Background()
	at := winFrom.Add(9 * time.Hour)
	if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: key, Provider: "mpesa",
		Amount: amt, Customer: "254712340845", Reference: ref}, State: ledger.StateSucceeded, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if txn != "" {
		p := ledger.ProviderTxn{Provider: "mpesa", ID: txn, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
			Amount: kes(t, amt.Value.StringFixed(2)), OccurredAt: at.Add(time.Minute), Reference: typed}
		if _, err := s.UpsertProviderTxn(ctx, p, ledger.Source{Channel: "statement", Ref: "s.csv:2", ReceivedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	unknown = ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{txn}), Kind: ledger.KindUnknownCharge,
		Severity: ledger.SeverityMedium, Provider: "mpesa", ProviderTxnIDs: []string{txn}, Expected: kes(t, "0"),
		Actual: kes(t, amt.Value.StringFixed(2)), AtRisk: kes(t, amt.Value.StringFixed(2)), Counterparty: "254712340845 JANE",
		Detail: "successful charge links to no intent (reference " + strconv.Quote(typed) + ")", OccurredAt: at.Add(time.Minute),
		Status: ledger.FindingOpen}
	missing = ledger.Finding{ID: ledger.FindingID(ledger.KindMissingAtProvider, key, nil), Kind: ledger.KindMissingAtProvider,
		Severity: ledger.SeverityMedium, Provider: "mpesa", IntentKey: key, Expected: amt, AtRisk: amt,
		Detail: "intent succeeded locally but the provider shows no successful charge", OccurredAt: at, Status: ledger.FindingOpen}
	why := "same amount; reference " + typed + " is " + ref + " with O read as 0"
	unknown.Suggestion = ledger.Suggestion{FindingID: missing.ID, IntentKey: key, TxnID: txn, Reason: why}
	missing.Suggestion = ledger.Suggestion{FindingID: unknown.ID, IntentKey: key, TxnID: txn, Reason: why}
	return unknown, missing
}

// TestAcceptSuggestion drives the Accept suggestion button on each engine:
// a signed press matches the pair in the books with the Slack user as
// actor, resolves both findings with matched events, plans their
// follow-ups and rewrites the message; a retried delivery changes nothing;
// a press on a suggestion that a later run replaced, on a pair whose
// currencies differ, on a resolved finding or pair, or on a transaction
// already linked is refused with an ephemeral message and changes nothing.
func TestAcceptSuggestion(t *testing.T) {
	t.Parallel()
	for _, engine := range dbtest.Engines() {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setupDelivery(t, engine.New(t), ModeBot, func(c *Config) {
				c.Buttons = true
				c.FindingsURL = "https://reconcile.example.com/console/findings"
				c.ImmediateSeverity = ledger.SeverityMedium
			})
			amt := kes(t, "1500.00")
			unknown, missing := typoPair(t, b.store, "charge:order-4471", "INV1001", "SE41XYZ777", "INV1O01", amt)
			// A pair whose suggestion a later run replaces.
			staleU, staleM := typoPair(t, b.store, "charge:order-4472", "INV1002", "SE41XYZ778", "INV1O02", amt)
			if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "charge:order-4473",
				Provider: "mpesa", Amount: amt, Reference: "INV1003"}, State: ledger.StateSucceeded, CreatedAt: winFrom.Add(9 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
			// A charge in KES whose (stored) suggestion names an intent in
			// USD: the match is refused.
			usd, err := money.Parse("1500.00", "USD")
			if err != nil {
				t.Fatal(err)
			}
			usdU, usdM := typoPair(t, b.store, "charge:order-4474", "INV1004", "SE41XYZ779", "INV1O04", usd)
			usdU.Actual, usdU.AtRisk = amt, amt
			// A pair matched from the console, then reopened by hand.
			linkU, linkM := typoPair(t, b.store, "charge:order-4475", "INV1005", "SE41XYZ780", "INV1O05", amt)
			all := []ledger.Finding{unknown, missing, staleU, staleM, usdU, usdM, linkU, linkM}
			planned := b.rec.run(all...)
			b.drain(t, ids(planned), 1)

			alertOf := map[string]int64{}
			for _, a := range planned {
				alertOf[a.Subject] = a.ID
			}
			post := func(f ledger.Finding) alertstest.Post {
				t.Helper()
				for _, p := range b.bot.Posts() {
					if p.AlertID == strconv.FormatInt(alertOf[f.ID], 10) && alertOf[f.ID] != 0 {
						return p
					}
				}
				t.Fatalf("no message about %s", f.ID)
				return alertstest.Post{}
			}
			p := post(unknown)
			golden.AssertJSON(t, "testdata/accept.opened.blocks.json", p.Blocks)

			var (
				mu      sync.Mutex
				planMsg []ledger.Alert
				resolvd []string
			)
			h, err := NewInteractions(InteractionsConfig{SigningSecret: testSigningSecret, AllowedUsers: []string{"U0ALICE"},
				Alerts: b.cfg, Store: b.store, Clock: b.clock.Now, HTTPClient: testHTTPClient(t),
				Findings: findings.NewService(b.store, findings.Options{Clock: b.clock.Now,
					Announce: func(ctx context.Context, tx ledger.Tx, f ledger.Finding) error {
						as, err := b.rec.planner.PlanResolution(ctx, tx, f)
						mu.Lock()
						defer mu.Unlock()
						planMsg = append(planMsg, as...)
						resolvd = append(resolvd, f.ID)
						return err
					}})})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle("POST /slack/interactions", h)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)

			history := func(id string) []string {
				t.Helper()
				evs, err := b.store.FindingHistory(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, ev := range evs {
					out = append(out, string(ev.Action)+" "+ev.Who()+" "+string(ev.Surface))
				}
				return out
			}
			status := func(f ledger.Finding) ledger.FindingStatus {
				t.Helper()
				g, err := b.store.GetFinding(ctx, f.ID)
				if err != nil {
					t.Fatal(err)
				}
				return g.Status
			}
			press := func(user, name string, f ledger.Finding, value, actionTS string, retry int) {
				t.Helper()
				p := post(f)
				r := slackRequest(t, srv.URL, testSigningSecret, time.Now(),
					blockActionPayload(user, name, p.Channel, p.TS, actionAccept, value, actionTS), retry)
				if r.StatusCode != http.StatusOK {
					t.Errorf("accept by %s on %s: %d", user, f.ID, r.StatusCode)
				}
			}
			accept := func(f ledger.Finding) string {
				sg := f.Suggestion
				return buttonRef{Alert: alertOf[f.ID], Finding: f.ID, Intent: sg.IntentKey, Txn: sg.TxnID, Pair: sg.FindingID}.encode()
			}
			ephemerals := func() []alertstest.Ephemeral { return b.bot.Ephemerals() }
			if !strings.Contains(string(p.Blocks), `"action_id":"reconcile_accept","value":`+mustJSON(t, accept(unknown))) {
				t.Fatalf("the message has no Accept suggestion button carrying %s:\n%s", accept(unknown), p.Blocks)
			}

			// Mallory may not act.
			press("U0MALLORY", "mallory", unknown, accept(unknown), "1714629600.000100", 0)
			if status(unknown) != ledger.FindingOpen || len(ephemerals()) != 1 {
				t.Errorf("unauthorised accept: %s, ephemerals %+v", status(unknown), ephemerals())
			}

			// Alice accepts on the unknown_charge's message; Slack delivers
			// the press twice.
			startU, startM := len(history(unknown.ID)), len(history(missing.ID))
			for retry := range 2 {
				press("U0ALICE", "alice", unknown, accept(unknown), "1714629700.000100", retry)
			}
			l, err := b.store.GetManualLink(ctx, "mpesa", "SE41XYZ777")
			if err != nil {
				t.Fatalf("no manual link after accepting: %v", err)
			}
			if l.IntentKey != "charge:order-4471" || l.Actor != "@alice (U0ALICE)" {
				t.Errorf("link: %+v", l)
			}
			for _, f := range []ledger.Finding{unknown, missing} {
				g, err := b.store.GetFinding(ctx, f.ID)
				if err != nil {
					t.Fatal(err)
				}
				if g.Status != ledger.FindingResolved || g.ResolvedBy != ledger.ResolvedByPerson || g.Resolver != "@alice (U0ALICE)" {
					t.Errorf("%s after accept: %s by %s %q", f.Kind, g.Status, g.ResolvedBy, g.Resolver)
				}
			}
			for id, start := range map[string]int{unknown.ID: startU, missing.ID: startM} {
				h := history(id)
				want := []string{"matched @alice (U0ALICE) slack", "resolved @alice (U0ALICE) slack"}
				if len(h) != start+2 || h[start] != want[0] || h[start+1] != want[1] {
					t.Errorf("history of %s after a retried accept: %v", id, h)
				}
			}
			mu.Lock()
			if len(resolvd) != 2 {
				t.Errorf("follow-ups planned for %v, want each finding once", resolvd)
			}
			followUps := ids(planMsg)
			mu.Unlock()
			p = post(unknown)
			if p.Updates < 1 || strings.Contains(string(p.Blocks), actionsBlockID) ||
				!strings.Contains(string(p.Blocks), "Suggested match accepted* by @alice (U0ALICE)") {
				t.Errorf("message after accept (%d updates): %s", p.Updates, p.Blocks)
			}
			golden.AssertJSON(t, "testdata/accept.accepted.blocks.json", p.Blocks)
			if e := ephemerals(); len(e) != 1 {
				t.Errorf("an accepted press told the user something: %+v", e[1:])
			}

			// The follow-ups name who matched them and where, and the first
			// messages say who resolved them.
			b.drain(t, followUps, 2)
			var threaded int
			for _, fp := range b.bot.Posts() {
				if fp.ThreadTS != "" && strings.Contains(fp.Text, "matched by hand by @alice (U0ALICE) in Slack") {
					threaded++
				}
			}
			if threaded != 2 {
				t.Errorf("%d follow-ups say who matched them, want 2", threaded)
			}
			if pm := post(missing); !strings.Contains(string(pm.Blocks), "Resolved* by @alice (U0ALICE) in Slack") {
				t.Errorf("the missing_at_provider's message after its follow-up: %s", pm.Blocks)
			}

			// The Accept button of the other message, pressed later: the
			// finding is resolved; nothing changes and the user is told.
			press("U0ALICE", "alice", missing, accept(missing), "1714629800.000100", 0)
			if len(history(missing.ID)) != startM+2 {
				t.Errorf("a late accept changed the history: %v", history(missing.ID))
			}
			if e := ephemerals(); len(e) != 2 || !strings.Contains(e[1].Text, "resolved already") {
				t.Errorf("late accept: %+v", e)
			}

			// A later run suggests another intent for the stale pair; the
			// old button is refused and the message redrawn.
			old := accept(staleU)
			staleU.Suggestion.IntentKey = "charge:order-4473"
			staleU.Suggestion.Reason = "same amount and customer"
			staleM.Suggestion = ledger.Suggestion{}
			b.rec.run(staleU, staleM, usdU, usdM)
			updates := post(staleU).Updates
			startS := len(history(staleU.ID))
			press("U0ALICE", "alice", staleU, old, "1714629900.000100", 0)
			if _, err := b.store.GetManualLink(ctx, "mpesa", "SE41XYZ778"); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("a stale suggestion was accepted: %v", err)
			}
			if status(staleU) != ledger.FindingOpen || status(staleM) != ledger.FindingOpen || len(history(staleU.ID)) != startS {
				t.Errorf("stale accept changed the findings: %v", history(staleU.ID))
			}
			if e := ephemerals(); len(e) != 3 || !strings.Contains(e[2].Text, "out of date") {
				t.Errorf("stale accept: %+v", e)
			}
			if ps := post(staleU); ps.Updates != updates+1 || !strings.Contains(string(ps.Blocks), "charge:order-4473") {
				t.Errorf("the message was not redrawn with the new suggestion (%d updates): %s", ps.Updates, ps.Blocks)
			}

			// A suggestion whose currencies differ: refused by the books,
			// with their words, and no phone number.
			press("U0ALICE", "alice", usdU, accept(usdU), "1714630000.000100", 0)
			if _, err := b.store.GetManualLink(ctx, "mpesa", "SE41XYZ779"); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("a match across currencies was made: %v", err)
			}
			if status(usdU) != ledger.FindingOpen || status(usdM) != ledger.FindingOpen {
				t.Errorf("refused accept changed the findings")
			}
			e := ephemerals()
			if len(e) != 4 || !strings.Contains(e[3].Text, "currencies differ") || strings.Contains(e[3].Text, "254712340845") {
				t.Errorf("currency refusal: %+v", e)
			}
			// The console matched the last pair; someone reopened the
			// unknown_charge: its pair is resolved, so nothing changes.
			carol := ledger.Actor{Name: "carol@example.com", Surface: ledger.SurfaceWeb}
			if _, err := ledger.MatchManually(ctx, b.store, ledger.MatchParams{FindingID: linkU.ID, IntentKey: "charge:order-4475",
				Actor: carol, Now: b.clock.Now()}); err != nil {
				t.Fatal(err)
			}
			reopen := func(f ledger.Finding) {
				t.Helper()
				if _, err := b.store.UpdateFinding(ctx, ledger.FindingUpdate{ID: f.ID, To: ledger.FindingOpen, Note: "looking again",
					Now: b.clock.Now(), Actor: carol}); err != nil {
					t.Fatal(err)
				}
			}
			reopen(linkU)
			startL := len(history(linkU.ID))
			press("U0ALICE", "alice", linkU, accept(linkU), "1714630100.000100", 0)
			if e := ephemerals(); len(e) != 5 || !strings.Contains(e[4].Text, "other half of the pair") || !strings.Contains(e[4].Text, "resolved already") {
				t.Errorf("accept with the pair resolved: %+v", e)
			}
			// Both reopened: the transaction is already matched by hand,
			// and the books refuse a second link.
			reopen(linkM)
			press("U0ALICE", "alice", linkU, accept(linkU), "1714630200.000100", 0)
			e = ephemerals()
			if len(e) != 6 || !strings.Contains(e[5].Text, "already matched by hand") || strings.Contains(e[5].Text, "ledger:") {
				t.Errorf("accept of a transaction already linked: %+v", e)
			}
			if l, err := b.store.GetManualLink(ctx, "mpesa", "SE41XYZ780"); err != nil || l.Actor != "carol@example.com" {
				t.Errorf("the console's link after refused presses: %+v, %v", l, err)
			}
			if h := history(linkU.ID); len(h) != startL || status(linkU) != ledger.FindingOpen {
				t.Errorf("refused presses changed the finding: %s, %v", status(linkU), h)
			}
			for _, m := range e {
				if strings.Contains(m.Text, b.cfg.BotToken) || strings.Contains(m.Text, testSigningSecret) {
					t.Errorf("a secret in an ephemeral: %q", m.Text)
				}
			}
			checkNoSecrets(t, b)
		})
	}
}

// TestAcceptButtonGolden is the Block Kit of a finding message with a
// suggestion when buttons are on: Accept suggestion first, with a
// confirmation naming the pair, and its value carrying the suggestion.
func TestAcceptButtonGolden(t *testing.T) {
	cfg := testConfig(ModeBot, nil)
	cfg.Buttons = true
	unknown, missing := typoPairFindings(t)
	for name, f := range map[string]ledger.Finding{"unknown_charge": unknown, "missing_at_provider": missing} {
		a := ledger.Alert{ID: 21, Subject: f.ID, Reason: reason{Kind: reasonOpened}.String(), Provider: f.Provider, RunID: 1,
			Severity: f.Severity, Channel: cfg.channelFor(f.Severity), CreatedAt: t0}
		m, err := buildFindingMessage(cfg, a, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkSafe(t, m)
		blocks, err := json.Marshal(m.Blocks)
		if err != nil {
			t.Fatal(err)
		}
		golden.AssertJSON(t, "testdata/accept_button."+name+".blocks.json", blocks)
	}
	// Without a suggestion there is no button.
	unknown.Suggestion = ledger.Suggestion{}
	if blocks := findingActions(cfg, ledger.Alert{ID: 21}, unknown); len(blocks) != 1 || strings.Contains(mustJSON(t, blocks), actionAccept) {
		t.Errorf("a finding without a suggestion got an accept button: %s", mustJSON(t, blocks))
	}
}

// typoPairFindings is the pair of typoPair, without the books.
func typoPairFindings(t *testing.T) (unknown, missing ledger.Finding) {
	at := winFrom.Add(9 * time.Hour)
	unknown = ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{"SE41XYZ777"}), Kind: ledger.KindUnknownCharge,
		Severity: ledger.SeverityMedium, Provider: "mpesa", ProviderTxnIDs: []string{"SE41XYZ777"}, Expected: kes(t, "0"),
		Actual: kes(t, "1500.00"), AtRisk: kes(t, "1500.00"), Counterparty: "254712340845 JANE",
		Detail: `successful charge links to no intent (reference "INV1O01")`, OccurredAt: at.Add(time.Minute),
		Status: ledger.FindingOpen, FirstSeenAt: t0, LastSeenAt: t0}
	missing = ledger.Finding{ID: ledger.FindingID(ledger.KindMissingAtProvider, "charge:order-4471", nil), Kind: ledger.KindMissingAtProvider,
		Severity: ledger.SeverityMedium, Provider: "mpesa", IntentKey: "charge:order-4471", Expected: kes(t, "1500.00"),
		AtRisk: kes(t, "1500.00"), Detail: "intent succeeded locally but the provider shows no successful charge", OccurredAt: at,
		Status: ledger.FindingAcknowledged, AcknowledgedBy: "@bob (U0BOB)", AcknowledgedAt: t0.Add(time.Hour), FirstSeenAt: t0, LastSeenAt: t0}
	why := "same amount; reference INV1O01 is INV1001 with O read as 0"
	unknown.Suggestion = ledger.Suggestion{FindingID: missing.ID, IntentKey: "charge:order-4471", TxnID: "SE41XYZ777", Reason: why}
	missing.Suggestion = ledger.Suggestion{FindingID: unknown.ID, IntentKey: "charge:order-4471", TxnID: "SE41XYZ777", Reason: why}
	return unknown, missing
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestResolverOf names who resolved a finding and where, from the
// history's resolution: an operator's e-mail stays, a phone number, a URL
// or a token does not.
func TestResolverOf(t *testing.T) {
	at := t0.Add(time.Hour)
	f := ledger.Finding{Status: ledger.FindingResolved, ResolvedBy: ledger.ResolvedByPerson, ResolvedAt: at, Resolver: "carol@example.com"}
	ev := func(a ledger.Action, who string, s ledger.Surface, at time.Time) ledger.HistoryEvent {
		return ledger.HistoryEvent{Action: a, Actor: who, Surface: s, At: at}
	}
	for _, tc := range []struct {
		name      string
		f         ledger.Finding
		hist      []ledger.HistoryEvent
		verb, who string
	}{
		{"no history", f, nil, "resolved", "carol@example.com"},
		{"console", f, []ledger.HistoryEvent{ev(ledger.ActionOpened, ledger.ActorRun, ledger.SurfaceRun, t0),
			ev(ledger.ActionResolved, "carol@example.com", ledger.SurfaceWeb, at)}, "resolved", "carol@example.com in the console"},
		{"command line", f, []ledger.HistoryEvent{ev(ledger.ActionResolved, "dave", ledger.SurfaceCLI, at)}, "resolved", "dave from the command line"},
		{"api", f, []ledger.HistoryEvent{ev(ledger.ActionResolved, "billing-bot", ledger.SurfaceAPI, at)}, "resolved", "billing-bot through the findings API"},
		{"matched in slack", f, []ledger.HistoryEvent{ev(ledger.ActionMatched, "@alice (U0ALICE)", ledger.SurfaceSlack, at),
			ev(ledger.ActionResolved, "@alice (U0ALICE)", ledger.SurfaceSlack, at)}, "matched", "@alice (U0ALICE) in Slack"},
		{"resolved again after an unmatch", f, []ledger.HistoryEvent{ev(ledger.ActionMatched, "@alice (U0ALICE)", ledger.SurfaceSlack, t0),
			ev(ledger.ActionResolved, "@alice (U0ALICE)", ledger.SurfaceSlack, t0), ev(ledger.ActionUnmatched, "dave", ledger.SurfaceCLI, at),
			ev(ledger.ActionReopened, "dave", ledger.SurfaceCLI, at), ev(ledger.ActionResolved, "dave", ledger.SurfaceCLI, at.Add(time.Hour))},
			"resolved", "dave from the command line"},
		{"a phone number and a token", f, []ledger.HistoryEvent{ev(ledger.ActionResolved, "0712 340 845 xoxb-123-abc", ledger.SurfaceWeb, at)},
			"resolved", "0712****0845 [redacted] in the console"},
	} {
		verb, who := resolverOf(tc.f, tc.hist)
		if verb != tc.verb || who != tc.who {
			t.Errorf("%s: %q %q, want %q %q", tc.name, verb, who, tc.verb, tc.who)
		}
	}
}
