package alerts

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/reconcilehq/reconcile/alerts/alertstest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
)

// messageCases are one message of each type, built from the fixtures.
func messageCases(t *testing.T, cfg Config) []struct {
	name string
	m    message
} {
	dup, failed, unknown := fixtureFindings(t)
	run := fixtureRun()
	finding := func(id int64, f ledger.Finding, r reason, hist ...ledger.HistoryEvent) message {
		t.Helper()
		a := ledger.Alert{ID: id, Subject: f.ID, Reason: r.String(), Provider: f.Provider, RunID: run.ID,
			Severity: f.Severity, Channel: cfg.channelFor(f.Severity), CreatedAt: t0}
		m, err := buildFindingMessage(cfg, a, f, hist)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	grown := dup
	grown.AtRisk, grown.Actual = kes(t, "3000.00"), kes(t, "4500.00")
	reopened := failed
	reopened.LastSeenAt = t0.Add(48 * time.Hour)
	resolved := dup
	resolved.Status, resolved.ResolvedAt, resolved.ResolvedBy = ledger.FindingResolved, t0.Add(72*time.Hour), ledger.ResolvedByRun
	resolved.Note = "no longer seen; refund SE41XYZ125 to 0712 340 845 matched"
	resolvedMsg := finding(4, resolved, reason{Kind: reasonResolved, At: resolved.ResolvedAt})
	resolvedMsg.ThreadTS = "1714629600.000100"

	summaryAlert := func(id int64, open []ledger.Finding) ledger.Alert {
		return ledger.Alert{ID: id, Subject: run.Key, Reason: reason{Kind: reasonSummary, Fingerprint: fingerprint(open), Attempt: 1}.String(),
			Provider: run.Provider, RunID: run.ID, Channel: cfg.Channel}
	}
	open := []ledger.Finding{unknown, dup, failed}
	summary := buildSummary(cfg, summaryInput{AlertID: 5, Run: run, Findings: open}, metadata(summaryAlert(5, open), "run_key"))
	cleanRun := run
	cleanRun.Counts = ledger.RunCounts{Intents: 1210, Transactions: 1210, Matched: 1210, Resolved: 3}
	cleanRun.Attempt = 3
	clean := buildSummary(cfg, summaryInput{AlertID: 6, Run: cleanRun}, metadata(summaryAlert(6, nil), "run_key"))

	var many []ledger.Finding
	for i := range 12 {
		f := unknown
		f.ProviderTxnIDs = []string{"SE41XYZ" + strconv.Itoa(400+i)}
		f.ID = ledger.FindingID(f.Kind, "", f.ProviderTxnIDs)
		f.AtRisk = kes(t, strconv.Itoa(100*(i+1))+".00")
		f.Actual = f.AtRisk
		if i%4 == 0 {
			f.Status = ledger.FindingAcknowledged
		}
		many = append(many, f)
	}
	many = append(many, dup)
	runningRun := run
	runningRun.State = ledger.RunRunning
	long := buildSummary(cfg, summaryInput{AlertID: 7, Run: runningRun, Findings: many}, metadata(summaryAlert(7, many), "run_key"))

	disputed := fixtureDispute(t)
	inquiry := disputed
	inquiry.Severity = ledger.SeverityMedium
	inquiry.Detail = "customer disputed charge ch_3PgbZ0B7WZ01zgkW for GBP 40.00 on 2024-11-23T15:00:01Z; the funds are not withdrawn yet"
	won := disputed
	won.Status, won.ResolvedAt, won.ResolvedBy = ledger.FindingResolved, t0.Add(96*time.Hour), ledger.ResolvedByRun
	won.Note = "no longer seen by run 9 (attempt 1)"

	suggested := dup
	suggested.Kind, suggested.IntentKey, suggested.Severity = ledger.KindUnknownCharge, "", ledger.SeverityMedium
	suggested.ProviderTxnIDs = []string{"SE41XYZ777"}
	suggested.ID = ledger.FindingID(suggested.Kind, "", suggested.ProviderTxnIDs)
	suggested.Detail = `successful charge of KES 1,500.00 links to no intent (reference "INV1O01")`
	suggested.Suggestion = ledger.Suggestion{FindingID: "f_0dac296d7c098f5bb15f", IntentKey: "charge:order-4471",
		TxnID: "SE41XYZ777", Reason: "same amount; reference INV1O01 is INV1001 with O read as 0"}

	// Resolved by a person in the console, and matched by hand in Slack:
	// the follow-ups name who and where, from the history.
	ev := func(id string, action ledger.Action, who string, surface ledger.Surface, at time.Time) ledger.HistoryEvent {
		return ledger.HistoryEvent{SubjectKind: ledger.SubjectFinding, SubjectID: id, Action: action, Actor: who, Surface: surface, At: at}
	}
	byHand := dup
	byHand.Status, byHand.ResolvedAt, byHand.ResolvedBy = ledger.FindingResolved, t0.Add(5*time.Hour), ledger.ResolvedByPerson
	byHand.Resolver, byHand.Note = "carol@example.com", "refunded SE41XYZ124 to the customer"
	byHandMsg := finding(12, byHand, reason{Kind: reasonResolved, At: byHand.ResolvedAt},
		ev(byHand.ID, ledger.ActionOpened, ledger.ActorRun, ledger.SurfaceRun, t0),
		ev(byHand.ID, ledger.ActionResolved, "carol@example.com", ledger.SurfaceWeb, byHand.ResolvedAt))
	byHandMsg.ThreadTS = "1714629600.000100"
	matched := suggested
	matched.Status, matched.ResolvedAt, matched.ResolvedBy = ledger.FindingResolved, t0.Add(6*time.Hour), ledger.ResolvedByPerson
	matched.Resolver = "@alice (U0ALICE)"
	matched.Note = "matched provider txn SE41XYZ777 with intent charge:order-4471: suggested match accepted (" + suggested.Suggestion.Reason + ")"
	matchedMsg := finding(13, matched, reason{Kind: reasonResolved, At: matched.ResolvedAt},
		ev(matched.ID, ledger.ActionOpened, ledger.ActorRun, ledger.SurfaceRun, t0),
		ev(matched.ID, ledger.ActionMatched, "@alice (U0ALICE)", ledger.SurfaceSlack, matched.ResolvedAt),
		ev(matched.ID, ledger.ActionResolved, "@alice (U0ALICE)", ledger.SurfaceSlack, matched.ResolvedAt))
	matchedMsg.ThreadTS = "1714629600.000200"

	return []struct {
		name string
		m    message
	}{
		{"dispute_opened", finding(8, inquiry, reason{Kind: reasonOpened})},
		{"dispute_escalated", finding(9, disputed, reason{Kind: reasonEscalated, Severity: ledger.SeverityHigh, AtRisk: disputed.AtRisk})},
		{"dispute_resolved", finding(10, won, reason{Kind: reasonResolved, At: won.ResolvedAt})},
		{"opened", finding(1, dup, reason{Kind: reasonOpened})},
		{"escalated", finding(2, grown, reason{Kind: reasonEscalated, Severity: ledger.SeverityHigh, AtRisk: grown.AtRisk})},
		{"reopened", finding(3, reopened, reason{Kind: reasonReopened, At: t0.Add(24 * time.Hour)})},
		{"resolved", resolvedMsg},
		{"summary", summary},
		{"summary_clean", clean},
		{"summary_long", long},
		{"suggested", finding(11, suggested, reason{Kind: reasonOpened})},
		{"resolved_by_person", byHandMsg},
		{"resolved_by_match", matchedMsg},
	}
}

// TestMessageGolden posts one message of each type to the fake endpoints
// and compares what went over the wire with the golden files: the exact
// JSON body in webhook mode, the form in bot mode (token removed).
func TestMessageGolden(t *testing.T) {
	ctx := context.Background()
	hook := alertstest.NewWebhook(t, nil, "C0FINOPS", "C0URGENT")
	bot := alertstest.NewBot(t, func() time.Time { return t0 })
	wcfg := testConfig(ModeWebhook, hook.URLs())
	bcfg := testConfig(ModeBot, nil)
	bcfg.APIURL = bot.APIURL()
	client := testHTTPClient(t)
	wp := &webhookPoster{urls: wcfg.Webhooks, client: client, defaultWait: time.Second}
	bp := newBotPoster(bcfg, client, slog.New(slog.DiscardHandler))

	for i, c := range messageCases(t, wcfg) {
		t.Run(c.name, func(t *testing.T) {
			checkLimits(t, c.m)
			checkSafe(t, c.m)
			if _, err := wp.post(ctx, c.m); err != nil {
				t.Fatal(err)
			}
			if _, err := bp.post(ctx, c.m); err != nil {
				t.Fatal(err)
			}
			wposts, bposts := hook.Posts(), bot.Posts()
			golden.AssertJSON(t, "testdata/"+c.name+".webhook.json", wposts[i].Raw)
			golden.Assert(t, "testdata/"+c.name+".bot.form", formGolden(t, bposts[i].Raw))
			if want := strconv.FormatInt(c.m.AlertID, 10); bposts[i].AlertID != want {
				t.Errorf("bot metadata alert id = %q, want %q", bposts[i].AlertID, want)
			}
		})
	}
}

// TestResolvedParentGolden: in bot mode a resolution also rewrites the
// thread's first message (chat.update) with a banner; the golden file is
// the form sent, token removed.
func TestResolvedParentGolden(t *testing.T) {
	cfg := testConfig(ModeBot, nil)
	dup, _, _ := fixtureFindings(t)
	dup.Status, dup.ResolvedAt, dup.ResolvedBy = ledger.FindingResolved, t0.Add(72*time.Hour), ledger.ResolvedByRun
	parent := ledger.Alert{ID: 1, Subject: dup.ID, Reason: "opened", Provider: "mpesa", RunID: 1,
		Severity: dup.Severity, Channel: "C0URGENT", State: ledger.AlertDelivered, MessageTS: "1714629600.000100"}
	m, err := resolvedParent(cfg, parent, dup, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkLimits(t, m)
	checkSafe(t, m)
	_, values, err := slack.UnsafeApplyMsgOptions("", m.Channel, cfg.APIURL,
		append([]slack.MsgOption{slack.MsgOptionUpdate(parent.MessageTS)}, m.updateOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	values.Del("token")
	blocks, _ := json.Marshal(m.Blocks)
	values.Set("blocks", string(blocks)) // set by the request builder, not the options
	golden.Assert(t, "testdata/resolved_parent.update.form", formGolden(t, []byte(values.Encode())))
}

// checkLimits asserts Slack's Block Kit limits.
func checkLimits(t *testing.T, m message) {
	t.Helper()
	if len(m.Blocks) == 0 || len(m.Blocks) > maxBlocks {
		t.Errorf("%d blocks", len(m.Blocks))
	}
	if m.Text == "" {
		t.Error("no text fallback")
	}
	raw, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Text string `json:"text"`
		} `json:"text"`
		Fields   []struct{ Text string } `json:"fields"`
		Elements []struct{ Text string } `json:"elements"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if b.Type == "header" && len([]rune(b.Text.Text)) > maxHeader {
			t.Errorf("header of %d characters", len([]rune(b.Text.Text)))
		}
		if b.Text != nil && len([]rune(b.Text.Text)) > maxSectionText {
			t.Errorf("text of %d characters", len([]rune(b.Text.Text)))
		}
		if len(b.Fields) > maxFields {
			t.Errorf("%d fields", len(b.Fields))
		}
		if b.Type == "context" && (len(b.Elements) == 0 || len(b.Elements) > 10) {
			t.Errorf("context with %d elements", len(b.Elements))
		}
	}
	for _, b := range m.Blocks {
		if s, ok := b.(*slack.SectionBlock); ok && s.Text == nil && len(s.Fields) == 0 {
			t.Error("empty section")
		}
	}
}

var (
	fullPhone = regexp.MustCompile(`(^|[^0-9A-Za-z_*])\d{9,}($|[^0-9A-Za-z_*])`)
	leakNames = []string{"WANJIKU", "DOE", "jane.doe", "hooks.slack.com", "secret", "xoxb-"}
)

// checkSafe asserts that no full phone number, second name, URL with a
// secret or token appears anywhere in the message (blocks, text, metadata).
func checkSafe(t *testing.T, m message) {
	t.Helper()
	raw, err := json.Marshal(struct {
		Text     string
		Blocks   []slack.Block
		Metadata slack.SlackMetadata
	}{m.Text, m.Blocks, m.Metadata})
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	if loc := fullPhone.FindStringIndex(s); loc != nil {
		t.Errorf("full phone number in message: %q", s[loc[0]:loc[1]])
	}
	for _, bad := range leakNames {
		if strings.Contains(s, bad) {
			t.Errorf("message contains %q", bad)
		}
	}
}
