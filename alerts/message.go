package alerts

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"github.com/slack-go/slack"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// metadataEventType marks the messages this package posts; the payload
// carries the alert id so that a redelivery can find an earlier post.
const metadataEventType = "reconcile_alert"

// message is one Slack message, ready to post in either mode.
type message struct {
	AlertID int64
	Kind    reasonKind
	// Channel is the routed channel; ThreadTS, when set, makes it a reply.
	Channel  string
	ThreadTS string
	// Text is the plain-text fallback shown in notifications.
	Text     string
	Blocks   []slack.Block
	Metadata slack.SlackMetadata
	// Parent, for a follow-up in bot mode, is the thread's first message
	// re-rendered to show the resolution; ParentTS is its timestamp.
	Parent   *message
	ParentTS string
}

// webhookMessage is the body posted to an incoming webhook.
func (m message) webhookMessage() *slack.WebhookMessage {
	off := false
	return &slack.WebhookMessage{
		Text:        m.Text,
		Blocks:      &slack.Blocks{BlockSet: m.Blocks},
		UnfurlLinks: &off,
		UnfurlMedia: &off,
	}
}

// updateOptions are the chat.update options that replace a message with m.
func (m message) updateOptions() []slack.MsgOption {
	return []slack.MsgOption{
		slack.MsgOptionText(m.Text, false),
		slack.MsgOptionBlocks(m.Blocks...),
		slack.MsgOptionMetadata(m.Metadata),
	}
}

// botOptions are the chat.postMessage options of the message.
func (m message) botOptions() []slack.MsgOption {
	opts := []slack.MsgOption{
		slack.MsgOptionText(m.Text, false),
		slack.MsgOptionBlocks(m.Blocks...),
		slack.MsgOptionMetadata(m.Metadata),
		slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionDisableMediaUnfurl(),
	}
	if m.ThreadTS != "" {
		opts = append(opts, slack.MsgOptionTS(m.ThreadTS))
	}
	return opts
}

func metadata(a ledger.Alert, subjectKey string) slack.SlackMetadata {
	return slack.SlackMetadata{EventType: metadataEventType, EventPayload: map[string]any{
		"alert_id": strconv.FormatInt(a.ID, 10),
		subjectKey: a.Subject,
		"reason":   a.Reason,
		"provider": a.Provider,
	}}
}

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func header(s string) slack.Block {
	return slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, truncate(s, maxHeader), false, false))
}

func section(s string, fields ...string) slack.Block {
	var text *slack.TextBlockObject
	if s != "" {
		text = mrkdwn(truncate(s, maxSectionText))
	}
	var objs []*slack.TextBlockObject
	for _, f := range fields {
		if len(objs) == maxFields {
			break
		}
		objs = append(objs, mrkdwn(truncate(f, maxFieldText)))
	}
	return slack.NewSectionBlock(text, objs, nil)
}

func contextBlock(parts ...string) slack.Block {
	var elems []slack.MixedElement
	for _, p := range parts {
		if p != "" {
			elems = append(elems, mrkdwn(truncate(p, maxContextText)))
		}
	}
	return slack.NewContextBlock("", elems...)
}

// footer is the context line every message ends with: what it is about,
// the alert id (as `reconcile jobs list` shows it), the command that lists
// the findings and, when configured, a link to them.
func footer(cfg Config, about string, alertID int64, provider string) slack.Block {
	alert := "alert " + strconv.FormatInt(alertID, 10)
	if alertID == 0 {
		alert = "preview"
	}
	return contextBlock(about+" · "+alert+" · "+code(findingsCommand(cfg, provider)), findingsLink(cfg, provider))
}

// buildFindingMessage renders the message of an alert about one finding.
// The reason decides the kind; the finding supplies the evidence as it
// stands now, and its history (nil when not read) who resolved it by hand
// and where.
func buildFindingMessage(cfg Config, a ledger.Alert, f ledger.Finding, hist []ledger.HistoryEvent) (message, error) {
	r, err := parseReason(a.Reason)
	if err != nil {
		return message{}, err
	}
	m := message{AlertID: a.ID, Kind: r.Kind, Channel: a.Channel, Metadata: metadata(a, "finding_id")}
	what := kindTitle(f.Kind) + " on " + accountName(f.Provider, f.Account)
	intent := scrub(f.IntentKey)
	ref := " (finding " + scrubID(f.ID) + ")"
	if intent != "" {
		ref = ", " + intentWord(f) + " " + intent + ref
	}
	if r.Kind == reasonResolved {
		return resolvedFindingMessage(cfg, a, f, r, hist, m, what, ref), nil
	}
	detail := findingDetail(f)
	atRisk := f.AtRisk
	switch r.Kind {
	case reasonOpened:
		m.Text = fmt.Sprintf("%s: %s, %s at risk%s", severityTitle(f.Severity), lowerFirst(what), amountText(atRisk), ref)
		m.Blocks = []slack.Block{
			header(what + " · " + amountText(atRisk) + " at risk"),
			section(joinNonEmpty(" ", ":rotating_light: *"+severityTitle(f.Severity)+"* severity.", detail)),
		}
	case reasonEscalated:
		if !r.AtRisk.IsZero() {
			atRisk = r.AtRisk
		}
		m.Text = fmt.Sprintf("Escalated to %s: %s, now %s at risk%s", strings.ToLower(severityTitle(r.Severity)),
			lowerFirst(what), amountText(atRisk), ref)
		m.Blocks = []slack.Block{
			header("Escalated: " + what + " · " + amountText(atRisk) + " at risk"),
			section(joinNonEmpty(" ", ":arrow_up: Now *"+severityTitle(r.Severity)+"* severity with *"+
				amountText(atRisk)+"* at risk.", detail)),
		}
	case reasonReopened:
		m.Text = fmt.Sprintf("Reopened: %s, %s at risk%s", lowerFirst(what), amountText(atRisk), ref)
		m.Blocks = []slack.Block{
			header("Reopened: " + what + " · " + amountText(atRisk) + " at risk"),
			section(joinNonEmpty(" ", ":repeat: Resolved "+timeText(r.At, cfg.zone(f.Provider))+", seen again "+
				timeText(f.LastSeenAt, cfg.zone(f.Provider))+". *"+severityTitle(f.Severity)+"* severity.", detail)),
		}
	default:
		return message{}, fmt.Errorf("alert %d: reason %q is not about a finding", a.ID, a.Reason)
	}
	m.Text = escape(truncate(m.Text, maxFallbackText))
	return appendFindingEvidence(cfg, a, f, atRisk, m), nil
}

// findingDetail is the finding's detail as a sentence, followed by what to
// do about its kind when that needs more than a look at the books.
func findingDetail(f ledger.Finding) string {
	detail := upperFirst(escape(scrub(f.Detail)))
	if hint := kindHint(f); hint != "" {
		if detail != "" && !strings.HasSuffix(detail, ".") {
			detail += "."
		}
		detail = joinNonEmpty(" ", detail, hint)
	}
	return detail
}

// resolvedFindingMessage fills m with the follow-up to a resolved finding:
// who or what resolved it and when, the note left, two fields and a footer.
func resolvedFindingMessage(cfg Config, a ledger.Alert, f ledger.Finding, r reason, hist []ledger.HistoryEvent, m message, what, ref string) message {
	by := "no longer seen by a reconcile run"
	if f.Kind == ledger.KindDisputedCharge {
		by = "the dispute was won and the funds reinstated"
	}
	if f.ResolvedBy == ledger.ResolvedByPerson {
		by = "resolved by hand"
		if verb, who := resolverOf(f, hist); who != "" {
			by = verb + " by hand by " + who
		}
	}
	m.Text = fmt.Sprintf("Resolved: %s, %s%s", lowerFirst(what), by, ref)
	line := ":white_check_mark: *Resolved:* " + escape(what) + ", " + escape(by) + " (" + timeText(r.At, cfg.zone(f.Provider)) + ")."
	if note := escape(scrub(f.Note)); note != "" {
		line += "\n>" + strings.ReplaceAll(note, "\n", "\n>")
	}
	m.Text = escape(m.Text)
	m.Blocks = []slack.Block{
		section(line, findingFields(cfg, f, f.AtRisk)[:2]...),
		footer(cfg, "Finding "+code(scrubID(f.ID)), a.ID, f.Provider),
	}
	return m
}

// appendFindingEvidence ends an open finding's message with the suggested
// fix, the finding's fields, its action buttons and the footer.
func appendFindingEvidence(cfg Config, a ledger.Alert, f ledger.Finding, atRisk money.Amount, m message) message {
	actions := findingActions(cfg, a, f)
	if f.Status != ledger.FindingResolved {
		if line := suggestionLine(f, acceptButton(a, f) != nil && len(actions) > 0); line != "" {
			m.Blocks = append(m.Blocks, section(line))
		}
	}
	m.Blocks = append(m.Blocks, section("", findingFields(cfg, f, atRisk)...))
	m.Blocks = append(m.Blocks, actions...)
	m.Blocks = append(m.Blocks, footer(cfg, "Finding "+code(scrubID(f.ID))+" · "+string(f.Status), a.ID, f.Provider))
	return m
}

// kindHint says what to do about a finding of a kind that needs more than
// a look at the books, "" for the others.
func kindHint(f ledger.Finding) string {
	if isBankKind(f.Kind) {
		return bankHint(f)
	}
	if f.Kind != ledger.KindDisputedCharge {
		return ""
	}
	if f.Severity == ledger.SeverityHigh {
		return "The funds are withdrawn: submit evidence in the " + accountName(f.Provider, f.Account) +
			" Dashboard before the dispute's deadline. This finding resolves itself if the dispute is won, and stays open if it is lost."
	}
	return "The funds are not withdrawn yet: answer the inquiry in the " + accountName(f.Provider, f.Account) +
		" Dashboard before its deadline."
}

// resolvedParent re-renders the first message about f (alert parent) with a
// banner saying it was resolved, for chat.update.
func resolvedParent(cfg Config, parent ledger.Alert, f ledger.Finding, hist []ledger.HistoryEvent) (message, error) {
	m, err := buildFindingMessage(cfg, parent, f, hist)
	if err != nil {
		return message{}, err
	}
	by := ""
	if _, who := resolverOf(f, hist); who != "" && f.ResolvedBy == ledger.ResolvedByPerson {
		by = " by " + escape(who)
	}
	banner := section(":white_check_mark: *Resolved*" + by + " " + timeText(f.ResolvedAt, cfg.zone(f.Provider)) + ". The follow-up is in the thread.")
	blocks := make([]slack.Block, 0, len(m.Blocks)+1)
	blocks = append(blocks, m.Blocks[0], banner)
	m.Blocks = append(blocks, m.Blocks[1:]...)
	m.Text = escape("Resolved: ") + m.Text
	m.Channel = parent.Channel
	return m, nil
}

// findingFields are the evidence of a finding as section fields; the first
// two (intent, amount at risk) also serve as the short form.
func findingFields(cfg Config, f ledger.Finding, atRisk money.Amount) []string {
	if isBankKind(f.Kind) {
		return bankFields(cfg, f, atRisk)
	}
	intent := code(scrub(f.IntentKey))
	if f.IntentKey == "" {
		intent = "none (no intent links to it)"
	}
	fields := []string{
		"*" + upperFirst(intentWord(f)) + "*\n" + intent,
		"*Amount at risk*\n" + amountText(atRisk),
		"*Expected*\n" + amountText(f.Expected),
		"*Actual*\n" + amountText(f.Actual),
		"*Provider receipts*\n" + receiptsText(f.ProviderTxnIDs),
		"*Counterparty*\n" + counterpartyText(f.Counterparty),
		"*Occurred*\n" + timeText(f.OccurredAt, cfg.zone(f.Provider)),
		"*First seen*\n" + timeText(f.FirstSeenAt, cfg.zone(f.Provider)),
	}
	return fields
}

func receiptsText(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	var parts []string
	for i, id := range sorted {
		if i == maxReceipts {
			parts = append(parts, "+"+strconv.Itoa(len(sorted)-maxReceipts)+" more")
			break
		}
		parts = append(parts, code(scrubID(id)))
	}
	return strings.Join(parts, ", ")
}

func counterpartyText(c string) string {
	m := maskCounterparty(c)
	if m == "" {
		return "-"
	}
	return escape(m)
}

// summaryInput is what a run summary shows.
type summaryInput struct {
	AlertID int64
	Run     ledger.Run
	// Findings are the window's open and acknowledged findings.
	Findings []ledger.Finding
}

// buildSummary renders the run summary of a provider and window.
func buildSummary(cfg Config, in summaryInput, meta slack.SlackMetadata) message {
	run := in.Run
	findings := slices.Clone(in.Findings)
	slices.SortFunc(findings, compareFindings)
	name := accountName(run.Provider, run.Account)
	window := windowText(run.From, run.To, cfg.zone(run.Provider))
	totals := totalsByCurrency(findings)

	m := message{AlertID: in.AlertID, Kind: reasonSummary, Channel: cfg.Channel, Metadata: meta}
	title := name + " reconciliation: no open findings"
	if n := len(findings); n > 0 {
		title = fmt.Sprintf("%s reconciliation: %s open finding%s", name, countText(n), plural(n))
	}
	m.Blocks = append(m.Blocks, header(title))
	intro := "Window *" + window + "*"
	if run.Attempt > 1 {
		intro += " (run " + strconv.Itoa(run.Attempt) + " of this window)"
	}
	fields := []string{
		"*Open findings*\n" + countText(len(findings)),
		"*Amount at risk*\n" + totalsText(totals, "\n"),
	}
	if run.State == ledger.RunFinished {
		if ledger.IsBankProvider(run.Provider) {
			fields = append(fields, bankCountFields(run)...)
		} else {
			fields = append(fields,
				"*Intents*\n"+countText(run.Counts.Intents)+" ("+countText(run.Counts.Matched)+" matched)",
				"*Provider transactions*\n"+countText(run.Counts.Transactions))
		}
		if run.Counts.Resolved > 0 {
			fields = append(fields, "*Resolved by this run*\n"+countText(run.Counts.Resolved))
		}
		if run.Counts.Settled > 0 {
			fields = append(fields, "*Unknown intents settled*\n"+countText(run.Counts.Settled))
		}
	}
	m.Blocks = append(m.Blocks, section(intro, fields...))

	var kindLines, kindText []string
	for _, kc := range countByKind(findings) {
		kindLines = append(kindLines, "• "+kindTitle(kc.kind)+": "+countText(kc.n)+" · "+totalsText(kc.totals, ", ")+" at risk")
		kindText = append(kindText, kindCount(kc.kind, kc.n))
	}
	if len(kindLines) > 0 {
		m.Blocks = append(m.Blocks, section("*By kind*\n"+strings.Join(kindLines, "\n")), slack.NewDividerBlock())
	}
	for i, f := range findings {
		if i == cfg.SummaryTop {
			m.Blocks = append(m.Blocks, contextBlock("…and "+countText(len(findings)-i)+" more open finding"+plural(len(findings)-i)))
			break
		}
		m.Blocks = append(m.Blocks, section(summaryLine(f)))
	}
	m.Blocks = append(m.Blocks, footer(cfg, "Run "+strconv.FormatInt(run.ID, 10), in.AlertID, run.Provider))

	m.Text = name + " reconciliation " + window + ": no open findings"
	if len(findings) > 0 {
		m.Text = fmt.Sprintf("%s reconciliation %s: %s open finding%s, %s at risk (%s)", name, window,
			countText(len(findings)), plural(len(findings)), totalsText(totals, ", "), strings.Join(kindText, ", "))
	}
	m.Text = escape(truncate(m.Text, maxFallbackText))
	return m
}

// intentWord names a finding's intent: "refund intent" for a refund,
// "intent" for a charge.
func intentWord(f ledger.Finding) string {
	if f.IntentKindShown() == ledger.IntentRefund {
		return "refund intent"
	}
	return "intent"
}

// summaryLine is one finding in a run summary.
func summaryLine(f ledger.Finding) string {
	first := "*" + kindTitle(f.Kind) + "* · " + severityTitle(f.Severity) + " · " + amountText(f.AtRisk) + " at risk"
	if f.Status == ledger.FindingAcknowledged {
		first += " · acknowledged"
	}
	second := upperFirst(intentWord(f)) + " " + code(scrub(f.IntentKey))
	if f.IntentKey == "" {
		second = "No intent"
	}
	second += " · expected " + amountText(f.Expected) + " · actual " + amountText(f.Actual)
	third := "Receipts " + receiptsText(f.ProviderTxnIDs) + " · " + counterpartyText(f.Counterparty)
	if isBankKind(f.Kind) {
		second, third = bankSummaryLine(f)
	}
	return first + "\n" + second + "\n" + third
}

// compareFindings orders findings worst first: severity, then amount at
// risk within a currency, then oldest, then id.
func compareFindings(a, b ledger.Finding) int {
	return cmp.Or(
		cmp.Compare(b.Severity.Rank(), a.Severity.Rank()),
		cmp.Compare(a.AtRisk.Currency, b.AtRisk.Currency),
		b.AtRisk.Value.Cmp(a.AtRisk.Value),
		a.OccurredAt.Compare(b.OccurredAt),
		cmp.Compare(a.ID, b.ID),
	)
}

// totalsByCurrency sums the amounts at risk per currency, sorted by code.
func totalsByCurrency(findings []ledger.Finding) []money.Amount {
	sums := map[string]decimal.Decimal{}
	for _, f := range findings {
		if !f.AtRisk.IsZero() {
			sums[f.AtRisk.Currency] = sums[f.AtRisk.Currency].Add(f.AtRisk.Value)
		}
	}
	out := make([]money.Amount, 0, len(sums))
	for _, cur := range sortedKeys(sums) {
		out = append(out, money.Amount{Value: sums[cur], Currency: cur})
	}
	return out
}

func totalsText(totals []money.Amount, sep string) string {
	if len(totals) == 0 {
		return "-"
	}
	parts := make([]string, len(totals))
	for i, t := range totals {
		parts[i] = amountText(t)
	}
	return strings.Join(parts, sep)
}

type kindTotal struct {
	kind   ledger.Kind
	n      int
	totals []money.Amount
}

// countByKind counts findings per kind in report order (ledger.Kinds),
// unknown kinds last by name.
func countByKind(findings []ledger.Finding) []kindTotal {
	by := map[ledger.Kind][]ledger.Finding{}
	for _, f := range findings {
		by[f.Kind] = append(by[f.Kind], f)
	}
	order := slices.Clone(ledger.Kinds)
	for _, k := range sortedKeys(by) {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	var out []kindTotal
	for _, k := range order {
		if fs := by[k]; len(fs) > 0 {
			out = append(out, kindTotal{kind: k, n: len(fs), totals: totalsByCurrency(fs)})
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || r == utf8.RuneError {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

// suggestionLine says which finding is probably the other half of f and
// how a person accepts the pair (also with the Accept suggestion button
// when button is set); "" when nothing is suggested. Nothing is matched
// until someone does.
func suggestionLine(f ledger.Finding, button bool) string {
	sg := f.Suggestion
	if sg.IsZero() {
		return ""
	}
	if isBankKind(f.Kind) {
		return bankSuggestionLine(f)
	}
	unknown := f.ID
	if f.Kind != ledger.KindUnknownCharge {
		unknown = sg.FindingID
	}
	how := ": " + code("reconcile findings match "+scrubID(unknown)+" --intent "+scrubID(sg.IntentKey))
	if button {
		how = " (the button below, or " + how[2:] + ")"
	}
	return ":bulb: *Suggested match:* intent " + code(scrubID(sg.IntentKey)) + " and provider charge " +
		code(scrubID(sg.TxnID)) + " (" + escape(scrub(sg.Reason)) + "), finding " + code(scrubID(sg.FindingID)) +
		". Nothing is matched until someone accepts" + how
}

// resolverOf says how and by whom a person resolved f, for people: verb
// "matched" when the resolution was a manual match, "resolved" otherwise,
// and who as "carol@example.com in the console" (scrubbed, not escaped),
// from the history's resolution event; without a history, f's resolver
// alone. who is "" when nobody is named.
func resolverOf(f ledger.Finding, hist []ledger.HistoryEvent) (verb, who string) {
	verb, name := "resolved", f.Resolver
	var surface ledger.Surface
	for i := len(hist) - 1; i >= 0; i-- {
		ev := hist[i]
		if ev.Action != ledger.ActionResolved || ev.Surface == ledger.SurfaceRun {
			continue
		}
		name, surface = ev.Actor, ev.Surface
		for _, prev := range hist[:i] {
			if prev.Action == ledger.ActionMatched && prev.At.Equal(ev.At) && prev.Actor == ev.Actor {
				verb = "matched"
			}
		}
		break
	}
	if name == "" || name == ledger.ActorRun {
		return verb, ""
	}
	who = scrubActor(name)
	if where := surfaceText(surface); where != "" {
		who += " " + where
	}
	return verb, who
}

// surfaceText says where a person acted: "in the console".
func surfaceText(s ledger.Surface) string {
	switch s {
	case ledger.SurfaceCLI:
		return "from the command line"
	case ledger.SurfaceWeb:
		return "in the console"
	case ledger.SurfaceSlack:
		return "in Slack"
	case ledger.SurfaceAPI:
		return "through the findings API"
	}
	return ""
}
