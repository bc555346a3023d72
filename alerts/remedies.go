package alerts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

// Remedies in Slack. A finding's message carries, beside Acknowledge and
// Resolve, the buttons of the remedies that apply to its kind: Refund… on a
// duplicate charge or an overpayment, Write off… on an amount mismatch, an
// underpayment or a fee finding, Retry… and Cancel… on a stuck intent. Each
// opens a dialog for the note (and the amount of a refund or a write-off);
// its submission decides through the findings service, once per dialog.
//
// A refund or a write-off above its currency's threshold becomes a request:
// a message of its own (alert "request:N", subject "remedy:N") with Approve
// (confirmed) and Reject… (a dialog for the note), for the people who may
// act from Slack. Whatever surface decides it, what became of it (applied,
// rejected, expired) is a follow-up in the request's thread ("decided:N:S"),
// and the request's message is redrawn without its buttons.

// Buttons, dialogs and their blocks.
const (
	actionRemedy      = "reconcile_remedy"
	actionApprove     = "reconcile_approve"
	actionReject      = "reconcile_reject"
	remedyCallbackID  = "reconcile_remedy_note"
	rejectCallbackID  = "reconcile_reject_note"
	amountBlockID     = "amount"
	amountActionID    = "amount"
	requestsBlockID   = "reconcile_request"
	maxRemedyButtons  = 4
	remedyNotePrompt  = "What is done and why"
	rejectNotePrompt  = "Why it is rejected"
	approveConfirmFmt = "%s asked by %s is carried out now, with your name as who approved it."
)

// remedyVerbs are the verbs a finding message may offer, in order, with
// their button text.
var remedyVerbs = []struct {
	verb  findings.Verb
	label string
}{{findings.Refund, "Refund…"}, {findings.WriteOff, "Write off…"}, {findings.Retry, "Retry…"}, {findings.Cancel, "Cancel…"}}

// remedyButtons are the remedy buttons of an unresolved finding's message.
func remedyButtons(a ledger.Alert, f ledger.Finding) []slack.BlockElement {
	var out []slack.BlockElement
	for _, rv := range remedyVerbs {
		if !findings.Remediable(rv.verb, f.Kind) || len(out) == maxRemedyButtons {
			continue
		}
		value := buttonRef{Alert: a.ID, Finding: f.ID, Verb: string(rv.verb)}.encode()
		out = append(out, slack.NewButtonBlockElement(actionRemedy, value, plainText(rv.label)))
	}
	return out
}

// remedyDialog asks for the note of a remedy (and the amount of a refund
// or a write-off).
func remedyDialog(ref buttonRef, f ledger.Finding) slack.ModalViewRequest {
	verb := findings.Verb(ref.Verb)
	title := map[findings.Verb]string{findings.Refund: "Refund", findings.WriteOff: "Write off", findings.Retry: "Retry the charge",
		findings.Cancel: "Cancel the intent", findings.Reject: "Reject the request"}[verb]
	prompt := remedyNotePrompt
	callback := remedyCallbackID
	if verb == findings.Reject {
		prompt, callback = rejectNotePrompt, rejectCallbackID
	}
	blocks := []slack.Block{
		section(kindTitle(f.Kind) + " on " + accountName(f.Provider, f.Account) + " · " + amountText(f.AtRisk) + " at risk\nFinding " + code(scrubID(f.ID))),
	}
	if verb == findings.Refund || verb == findings.WriteOff {
		hint := "Leave empty for the money at risk."
		if verb == findings.Refund {
			hint = "Leave empty for the duplicate's amount, or the excess."
		}
		input := slack.NewPlainTextInputBlockElement(plainText(hint), amountActionID)
		amount := slack.NewInputBlock(amountBlockID, plainText("Amount ("+f.AtRisk.Currency+")"), nil, input)
		amount.Optional = true
		blocks = append(blocks, amount)
	}
	note := slack.NewPlainTextInputBlockElement(plainText(prompt), noteActionID).WithMultiline(true).WithMaxLength(maxNote)
	blocks = append(blocks, slack.NewInputBlock(noteBlockID, plainText("Note"), nil, note))
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           plainText(title),
		Submit:          plainText(title),
		Close:           plainText("Cancel"),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: ref.encode(),
		CallbackID:      callback,
	}
}

// PlanRemedy records, in the caller's transaction, what Slack says of
// remedy r on finding f: its request message while it awaits approval,
// and what became of it once decided (a follow-up in the request's
// thread, only when the request was announced). It returns the new
// alerts, for the caller to enqueue; nothing for a remedy applied at once.
func (p *Planner) PlanRemedy(ctx context.Context, tx PlanStore, r ledger.Remedy, f ledger.Finding) ([]ledger.Alert, error) {
	var rs reason
	switch {
	case r.Status == ledger.RemedyAwaitingApproval:
		rs = reason{Kind: reasonRequest, Remedy: r.ID}
	case r.DecidedBy != "" || r.Status == ledger.RemedyExpired:
		_, err := tx.FirstDelivered(ctx, remedySubject(r.ID))
		if errors.Is(err, ledger.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("alerts: plan remedy %d: %w", r.ID, err)
		}
		status := r.Status
		if status == ledger.RemedyConfirmed {
			status = ledger.RemedyApplied
		}
		rs = reason{Kind: reasonDecided, Remedy: r.ID, Status: status}
	default:
		return nil, nil
	}
	a := ledger.Alert{Subject: remedySubject(r.ID), Reason: rs.String(), Provider: f.Provider, Severity: f.Severity,
		Channel: p.cfg.channelFor(f.Severity), CreatedAt: p.now().UTC()}
	stored, isNew, err := tx.RecordAlert(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("alerts: plan remedy %d: %w", r.ID, err)
	}
	if !isNew {
		return nil, nil
	}
	return []ledger.Alert{stored}, nil
}

// buildRemedyMessage renders a request (reasonRequest: with Approve and
// Reject while it waits) or what became of it (reasonDecided).
func buildRemedyMessage(cfg Config, a ledger.Alert, rs reason, r ledger.Remedy, f ledger.Finding) (message, error) {
	if r.ID != rs.Remedy {
		return message{}, fmt.Errorf("alert %d is not about remedy %d", a.ID, r.ID)
	}
	m := message{AlertID: a.ID, Kind: rs.Kind, Channel: a.Channel, Metadata: metadata(a, "remedy")}
	zone := cfg.zone(f.Provider)
	asked := escape(scrubActor(r.RequestedBy)) + " " + surfaceText(r.RequestedVia)
	about := lowerFirst(kindTitle(f.Kind)) + " on " + accountName(f.Provider, f.Account)
	if f.IntentKey != "" {
		about += ", " + intentWord(f) + " " + code(scrub(f.IntentKey))
	}
	about += " (finding " + code(scrubID(f.ID)) + ")"
	note := ""
	if n := escape(scrub(r.Note)); n != "" {
		note = "\n>" + strings.ReplaceAll(n, "\n", "\n>")
	}
	footerBlock := footer(cfg, "Request "+strconv.FormatInt(r.ID, 10)+" · finding "+code(scrubID(f.ID)), a.ID, f.Provider)
	if rs.Kind == reasonDecided {
		line := decidedLine(cfg, r)
		m.Text = escape(truncate(r.Describe()+": "+decidedText(r), maxFallbackText))
		m.Blocks = []slack.Block{section(line), footerBlock}
		return m, nil
	}
	m.Text = escape(truncate(fmt.Sprintf("Approval needed: %s asked by %s", r.Describe(), scrubActor(r.RequestedBy)), maxFallbackText))
	m.Blocks = []slack.Block{
		header("Approval needed: " + r.Describe()),
		section(":raised_hand: " + asked + " asks for a *" + escape(r.Describe()) + "*: " + about + "." + note),
		section("", "*Amount*\n"+amountText(r.Amount), "*Expires*\n"+timeText(r.ExpiresAt, zone),
			"*Asked*\n"+timeText(r.RequestedAt, zone), "*Payment*\n"+orDashText(code(scrubID(r.TxnID)), r.TxnID)),
	}
	if r.Status == ledger.RemedyAwaitingApproval {
		m.Blocks = append(m.Blocks, contextBlock("Another person must approve it; the person who asked cannot. "+
			"Unapproved by then, it expires and does nothing."))
		if els := requestButtons(cfg, a, r, f); len(els) > 0 {
			m.Blocks = append(m.Blocks, slack.NewActionBlock(requestsBlockID, els...))
		}
	} else {
		m.Blocks = append(m.Blocks, section(decidedLine(cfg, r)))
	}
	m.Blocks = append(m.Blocks, footerBlock)
	return m, nil
}

func orDashText(shown, raw string) string {
	if raw == "" {
		return "-"
	}
	return shown
}

// requestButtons are Approve (confirmed) and Reject… of a waiting request,
// and the finding's page.
func requestButtons(cfg Config, a ledger.Alert, r ledger.Remedy, f ledger.Finding) []slack.BlockElement {
	if !cfg.Buttons || cfg.Mode != ModeBot {
		return nil
	}
	value := buttonRef{Alert: a.ID, Finding: f.ID, Request: r.ID}.encode()
	confirm := slack.NewConfirmationBlockObject(plainText("Approve the request?"),
		plainText(truncate(fmt.Sprintf(approveConfirmFmt, upperFirst(r.Describe()), scrubActor(r.RequestedBy)), maxConfirmText)),
		plainText("Approve"), plainText("Cancel"))
	els := []slack.BlockElement{
		slack.NewButtonBlockElement(actionApprove, value, plainText("Approve")).WithStyle(slack.StylePrimary).WithConfirm(confirm),
		slack.NewButtonBlockElement(actionReject, value, plainText("Reject…")).WithStyle(slack.StyleDanger),
	}
	if page := findingPage(cfg, f.ID); page != "" {
		els = append(els, slack.NewButtonBlockElement(actionOpen, "", plainText("Open in console")).WithURL(page))
	}
	return els
}

// decidedText says what became of a request, for the fallback text.
func decidedText(r ledger.Remedy) string {
	switch r.Status {
	case ledger.RemedyRejected:
		return "rejected by " + scrubActor(r.DecidedBy) + "; nothing was done"
	case ledger.RemedyExpired:
		return "expired unapproved; nothing was done"
	}
	return "approved by " + scrubActor(r.DecidedBy) + " and carried out"
}

// decidedLine says what became of a request, who decided, where and when.
func decidedLine(cfg Config, r ledger.Remedy) string {
	zone := cfg.zone(r.Provider)
	switch r.Status {
	case ledger.RemedyRejected:
		line := ":no_entry: *Rejected* by " + escape(scrubActor(r.DecidedBy)) + " " + surfaceText(r.DecidedVia) + " " +
			timeText(r.DecidedAt, zone) + "; nothing was done."
		if n := escape(scrub(r.DecisionNote)); n != "" {
			line += "\n>" + strings.ReplaceAll(n, "\n", "\n>")
		}
		return line
	case ledger.RemedyExpired:
		return ":hourglass: *Expired* unapproved " + timeText(r.ExpiresAt, zone) + "; nothing was done."
	}
	line := ":white_check_mark: *Approved* by " + escape(scrubActor(r.DecidedBy)) + " " + surfaceText(r.DecidedVia) + " " +
		timeText(r.DecidedAt, zone) + " and carried out."
	if r.Kind == ledger.RemedyRefund {
		line += " The finding is resolved when a run sees the money given back."
	}
	return line
}

// buildRemedy loads the remedy and finding of a request or decided alert
// and renders it; a decided follow-up goes in the request's thread, whose
// message is redrawn without buttons (bot mode).
func (d *Deliverer) buildRemedy(ctx context.Context, a ledger.Alert, rs reason) (message, error) {
	r, err := d.store.GetRemedy(ctx, rs.Remedy)
	if err != nil {
		return message{}, err
	}
	f, err := d.store.GetFinding(ctx, r.FindingID)
	if err != nil {
		return message{}, err
	}
	m, err := buildRemedyMessage(d.cfg, a, rs, r, f)
	if err != nil || rs.Kind != reasonDecided || d.cfg.Mode != ModeBot {
		return m, err
	}
	parent, err := d.store.FirstDelivered(ctx, a.Subject)
	switch {
	case err == nil && parent.MessageTS != "":
		m.Channel, m.ThreadTS = parent.Channel, parent.MessageTS
		if pr, err := parseReason(parent.Reason); err == nil && pr.Kind == reasonRequest {
			if pm, err := buildRemedyMessage(d.cfg, parent, pr, r, f); err == nil {
				pm.Channel = parent.Channel
				m.Parent, m.ParentTS = &pm, parent.MessageTS
			}
		}
	case err != nil && !errors.Is(err, ledger.ErrNotFound):
		return message{}, err
	}
	return m, nil
}

// remedyPressed answers a remedy button (the dialog) and Approve and
// Reject… of a request.
func (h *Interactions) remedyPressed(ctx context.Context, cb *slack.InteractionCallback, act *slack.BlockAction, ref buttonRef,
	key, channel, ts string) {
	if act.ActionID == actionApprove {
		out, err := h.cfg.Findings.Decide(ctx, findings.Decision{Verb: findings.Approve, FindingID: ref.Finding, Remedy: ref.Request,
			Actor: actor(cb.User), Once: key})
		h.afterRequest(ctx, ref, channel, ts, cb.User.ID, out, err)
		return
	}
	f, err := h.cfg.Store.GetFinding(ctx, ref.Finding)
	if err != nil {
		h.log.Error("slack remedy dialog", slog.String("finding", ref.Finding), slog.String("error", err.Error()))
		h.tell(ctx, channel, cb.User.ID, "That finding could not be read; nothing was changed.")
		return
	}
	ref.Channel, ref.TS = channel, ts
	if act.ActionID == actionReject {
		ref.Verb = string(findings.Reject)
	}
	if _, err := h.api.OpenViewContext(ctx, cb.TriggerID, remedyDialog(ref, f)); err != nil {
		h.log.Warn("slack remedy dialog not opened", slog.String("error", redact(err.Error(), h.secrets())))
	}
}

// remedySubmitted applies a remedy or rejection dialog; a non-nil answer
// keeps the dialog open with the error shown.
func (h *Interactions) remedySubmitted(ctx context.Context, cb *slack.InteractionCallback) *slack.ViewSubmissionResponse {
	ref, ok := parseButtonRef(cb.View.PrivateMetadata)
	verb, known := findings.ParseVerb(ref.Verb)
	if !ok || !known || (!findings.IsRemedy(verb) && verb != findings.Reject) {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: "This dialog is not one of reconcile's."})
	}
	if !h.allowed(ctx, cb.User.ID) {
		h.log.Info("slack interaction refused: user may not act", slog.String("user", cb.User.ID), slog.String("finding", ref.Finding))
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: "You may not act on findings from Slack; nothing was changed."})
	}
	var note, amount string
	if st := cb.View.State; st != nil {
		note = st.Values[noteBlockID][noteActionID].Value
		amount = st.Values[amountBlockID][amountActionID].Value
	}
	d := findings.Decision{Verb: verb, FindingID: ref.Finding, Actor: actor(cb.User), Note: note, Amount: amount, Remedy: ref.Request,
		Once: strings.Join([]string{"slack", "view_submission", cb.Team.ID, cb.View.ID}, ":")}
	out, err := h.cfg.Findings.Decide(ctx, d)
	var fe *ledger.FieldError
	switch {
	case errors.Is(err, findings.ErrNoteRequired):
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: "Say what is done and why."})
	case errors.Is(err, findings.ErrNoteTooLong):
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: fmt.Sprintf("At most %d bytes.", findings.MaxNote)})
	case errors.As(err, &fe) && fe.Field == "amount":
		return slack.NewErrorsViewSubmissionResponse(map[string]string{amountBlockID: truncate(upperFirst(fe.Err.Error())+".", 150)})
	case errors.As(err, &fe) && (fe.Field == "state" || fe.Field == "txn" || fe.Field == "action" || fe.Field == "intent"):
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: truncate("Refused: "+fe.Err.Error()+".", 150)})
	case errors.Is(err, ledger.ErrConflict) && findings.IsRemedy(verb):
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: truncate("Refused: "+refusalText(err)+".", 150)})
	}
	if verb == findings.Reject {
		h.afterRequest(ctx, ref, ref.Channel, ref.TS, cb.User.ID, out, err)
		return nil
	}
	if err == nil && out.Waiting() {
		h.tell(ctx, ref.Channel, cb.User.ID, fmt.Sprintf("Your %s awaits another operator's approval (request %d); it was posted for them.",
			out.Remedy.Describe(), out.Remedy.ID))
	}
	h.after(ctx, ref, ref.Channel, ref.TS, cb.User.ID, out.Finding, !out.Repeat, err)
	return nil
}

// refusalText is the reason of a conflict, without the operation's prefix.
func refusalText(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "conflict: "); i >= 0 {
		return s[i+len("conflict: "):]
	}
	return s
}

// afterRequest tells the user why an approval or a rejection was refused,
// or redraws the request's message as it now stands.
func (h *Interactions) afterRequest(ctx context.Context, ref buttonRef, channel, ts, user string, out findings.Outcome, err error) {
	switch {
	case errors.Is(err, findings.ErrOwnRequest):
		h.tell(ctx, channel, user, "You asked for this; another operator must approve it. Nothing was changed.")
		return
	case errors.Is(err, findings.ErrRequestExpired):
		h.tell(ctx, channel, user, "This request has expired unapproved and does nothing; ask again if it is still needed.")
	case errors.Is(err, findings.ErrNotWaiting):
		h.tell(ctx, channel, user, "This request was decided already; nothing was changed.")
	case errors.Is(err, ledger.ErrConflict):
		h.tell(ctx, channel, user, "That could not be done: "+refusalText(err)+". Nothing was changed.")
		return
	case err != nil:
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			h.tell(ctx, channel, user, "Refused: "+fe.Err.Error()+". Nothing was changed.")
			return
		}
		h.log.Error("slack interaction", slog.String("finding", ref.Finding), slog.String("error", err.Error()))
		h.tell(ctx, channel, user, "That could not be recorded; nothing was changed. Try again, or use the console.")
		return
	}
	if out.Repeat {
		h.log.Info("slack interaction repeated: applied once already", slog.String("finding", ref.Finding))
	}
	if channel == "" || ts == "" || out.Remedy == nil {
		return
	}
	a, gerr := h.cfg.Store.GetAlert(ctx, ref.Alert)
	if gerr != nil {
		h.log.Warn("slack request not redrawn", slog.String("finding", ref.Finding), slog.String("error", gerr.Error()))
		return
	}
	r, gerr := h.cfg.Store.GetRemedy(ctx, ref.Request)
	rs, perr := parseReason(a.Reason)
	if gerr != nil || perr != nil || rs.Kind != reasonRequest {
		return
	}
	m, berr := buildRemedyMessage(h.cfg.Alerts, a, rs, r, out.Finding)
	if berr != nil {
		return
	}
	if _, _, _, err := h.api.UpdateMessageContext(ctx, channel, ts, m.updateOptions()...); err != nil {
		h.log.Warn("slack request not updated", slog.String("finding", ref.Finding), slog.String("error", redact(err.Error(), h.secrets())))
	}
}

// Announcers returns the findings service's announcers: the Slack
// follow-up of a finding a person resolved, and the messages of a request
// awaiting a second person and of its decision, each planned and handed
// to enqueue in the deciding transaction.
func (p *Planner) Announcers(enqueue func(ctx context.Context, tx ledger.Tx, alerts []ledger.Alert) error) (findings.Announcer, findings.RemedyAnnouncer) {
	return func(ctx context.Context, tx ledger.Tx, f ledger.Finding) error {
			planned, err := p.PlanResolution(ctx, tx, f)
			if err != nil {
				return err
			}
			return enqueue(ctx, tx, planned)
		}, func(ctx context.Context, tx ledger.Tx, r ledger.Remedy, f ledger.Finding) error {
			planned, err := p.PlanRemedy(ctx, tx, r, f)
			if err != nil {
				return err
			}
			return enqueue(ctx, tx, planned)
		}
}
