package alerts

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/slack-go/slack"

	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/ledger"
)

// Buttons of finding messages (bot mode with Config.Buttons). Their values
// and the resolve dialog's private metadata carry a buttonRef; the
// interactions endpoint (Interactions) acts on them.
const (
	actionAck     = "reconcile_ack"
	actionResolve = "reconcile_resolve"
	actionOpen    = "reconcile_open"
	// actionAccept accepts a finding's suggested match.
	actionAccept = "reconcile_accept"
	// actionsBlockID names the block that holds the buttons.
	actionsBlockID = "reconcile_actions"
	// resolveCallbackID names the resolve dialog.
	resolveCallbackID = "reconcile_resolve_note"
	noteBlockID       = "note"
	noteActionID      = "note"
	// maxNote is the most the resolve dialog's text input takes, in
	// characters (Slack's limit); the findings service bounds a note in
	// bytes (findings.MaxNote).
	maxNote = 3000
	// maxButtonValue is Slack's limit on a button's value, in characters.
	maxButtonValue = 2000
	// maxConfirmText is Slack's limit on a confirmation's text.
	maxConfirmText = 300
)

// buttonRef ties a button to the alert whose message carries it and to the
// finding; in the resolve dialog it also says where the message is.
type buttonRef struct {
	Alert   int64  `json:"a"`
	Finding string `json:"f"`
	Channel string `json:"c,omitempty"`
	TS      string `json:"t,omitempty"`
	// Intent, Txn and Pair are, on an Accept suggestion button, the
	// suggestion as the message showed it: the intent and the provider
	// transaction to match and the other finding. The interactions
	// endpoint acts only while the finding still suggests exactly that.
	Intent string `json:"i,omitempty"`
	Txn    string `json:"x,omitempty"`
	Pair   string `json:"p,omitempty"`
	// Verb is, on a remedy button and in its dialog, the remedy (refund,
	// writeoff, retry, cancel; reject in a rejection's dialog).
	Verb string `json:"v,omitempty"`
	// Request is, on Approve and Reject, the request they decide.
	Request int64 `json:"r,omitempty"`
}

func (r buttonRef) encode() string {
	b, _ := json.Marshal(r) // a struct of strings and an int cannot fail
	return string(b)
}

func parseButtonRef(s string) (buttonRef, bool) {
	var r buttonRef
	if err := jsonbody.Decode([]byte(s), &r, jsonbody.Options{}); err != nil || r.Alert <= 0 || r.Finding == "" {
		return buttonRef{}, false
	}
	return r, true
}

// findingPage is the console's page of a finding, next to the findings
// list at FindingsURL; "" when no FindingsURL is set.
func findingPage(cfg Config, id string) string {
	if cfg.FindingsURL == "" {
		return ""
	}
	return strings.TrimSuffix(cfg.FindingsURL, "/") + "/" + url.PathEscape(id)
}

// findingActions are the blocks a finding message shows above its footer
// when buttons are on: who acknowledged it, and the buttons that still
// apply (Accept suggestion while it suggests a match, Acknowledge while
// open, Resolve while not resolved, the remedies of its kind, and the
// console's page). A resolved finding has none.
func findingActions(cfg Config, a ledger.Alert, f ledger.Finding) []slack.Block {
	if !cfg.Buttons || cfg.Mode != ModeBot || f.Status == ledger.FindingResolved {
		return nil
	}
	var out []slack.Block
	if f.Status == ledger.FindingAcknowledged && f.AcknowledgedBy != "" {
		out = append(out, contextBlock(":eyes: Acknowledged by "+escape(scrubActor(f.AcknowledgedBy))+" "+
			timeText(f.AcknowledgedAt, cfg.zone(f.Provider))))
	}
	value := buttonRef{Alert: a.ID, Finding: f.ID}.encode()
	var els []slack.BlockElement
	accept := acceptButton(a, f)
	if accept != nil {
		els = append(els, accept)
	}
	if f.Status == ledger.FindingOpen {
		ack := slack.NewButtonBlockElement(actionAck, value, plainText("Acknowledge"))
		if accept == nil {
			ack = ack.WithStyle(slack.StylePrimary)
		}
		els = append(els, ack)
	}
	els = append(els, slack.NewButtonBlockElement(actionResolve, value, plainText("Resolve…")))
	els = append(els, remedyButtons(a, f)...)
	if page := findingPage(cfg, f.ID); page != "" {
		els = append(els, slack.NewButtonBlockElement(actionOpen, "", plainText("Open in console")).WithURL(page))
	}
	return append(out, slack.NewActionBlock(actionsBlockID, els...))
}

func plainText(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
}

// acceptButton is the Accept suggestion button of a finding that suggests
// a match (nil for one that does not), with a confirmation that names the
// pair. Its value carries the suggestion, so that a press is refused once
// the finding suggests something else.
func acceptButton(a ledger.Alert, f ledger.Finding) *slack.ButtonBlockElement {
	sg := f.Suggestion
	if sg.IsZero() || sg.IntentKey == "" || sg.TxnID == "" ||
		(f.Kind != ledger.KindUnknownCharge && f.Kind != ledger.KindMissingAtProvider) {
		return nil
	}
	value := buttonRef{Alert: a.ID, Finding: f.ID, Intent: sg.IntentKey, Txn: sg.TxnID, Pair: sg.FindingID}.encode()
	if len(value) > maxButtonValue {
		return nil // the command in the suggestion line still works
	}
	confirm := slack.NewConfirmationBlockObject(plainText("Accept the suggested match?"),
		plainText(truncate("Provider charge "+scrubID(sg.TxnID)+" becomes the payment of intent "+scrubID(sg.IntentKey)+
			" in the books, and both findings are resolved with your name. It can be undone with findings unmatch.", maxConfirmText)),
		plainText("Accept"), plainText("Cancel"))
	return slack.NewButtonBlockElement(actionAccept, value, plainText("Accept suggestion")).
		WithStyle(slack.StylePrimary).WithConfirm(confirm)
}

// resolveDialog is the modal that asks for the note of a resolution.
func resolveDialog(ref buttonRef, f ledger.Finding) slack.ModalViewRequest {
	plain := plainText
	input := slack.NewPlainTextInputBlockElement(plain("What was done, or why it needs nothing"), noteActionID).
		WithMultiline(true).WithMaxLength(maxNote)
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  plain("Resolve finding"),
		Submit: plain("Resolve"),
		Close:  plain("Cancel"),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			section(kindTitle(f.Kind) + " on " + accountName(f.Provider, f.Account) + " · " + amountText(f.AtRisk) + " at risk\nFinding " + code(scrubID(f.ID))),
			slack.NewInputBlock(noteBlockID, plain("Note"), nil, input),
		}},
		PrivateMetadata: ref.encode(),
		CallbackID:      resolveCallbackID,
	}
}
