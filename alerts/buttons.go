package alerts

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/slack-go/slack"

	"github.com/reconcilehq/reconcile/ledger"
)

// Buttons of finding messages (bot mode with Config.Buttons). Their values
// and the resolve dialog's private metadata carry a buttonRef; the
// interactions endpoint (Interactions) acts on them.
const (
	actionAck     = "reconcile_ack"
	actionResolve = "reconcile_resolve"
	actionOpen    = "reconcile_open"
	// actionsBlockID names the block that holds the buttons.
	actionsBlockID = "reconcile_actions"
	// resolveCallbackID names the resolve dialog.
	resolveCallbackID = "reconcile_resolve_note"
	noteBlockID       = "note"
	noteActionID      = "note"
	// maxNote bounds a resolve note, in characters, as the findings API does.
	maxNote = 3000
)

// buttonRef ties a button to the alert whose message carries it and to the
// finding; in the resolve dialog it also says where the message is.
type buttonRef struct {
	Alert   int64  `json:"a"`
	Finding string `json:"f"`
	Channel string `json:"c,omitempty"`
	TS      string `json:"t,omitempty"`
}

func (r buttonRef) encode() string {
	b, _ := json.Marshal(r) // a struct of strings and an int cannot fail
	return string(b)
}

func parseButtonRef(s string) (buttonRef, bool) {
	var r buttonRef
	if err := json.Unmarshal([]byte(s), &r); err != nil || r.Alert <= 0 || r.Finding == "" {
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
// apply (Acknowledge while open, Resolve while not resolved, and the
// console's page). A resolved finding has none.
func findingActions(cfg Config, a ledger.Alert, f ledger.Finding) []slack.Block {
	if !cfg.Buttons || cfg.Mode != ModeBot || f.Status == ledger.FindingResolved {
		return nil
	}
	var out []slack.Block
	if f.Status == ledger.FindingAcknowledged && f.AcknowledgedBy != "" {
		out = append(out, contextBlock(":eyes: Acknowledged by "+escape(scrub(f.AcknowledgedBy))+" "+
			timeText(f.AcknowledgedAt, cfg.zone(f.Provider))))
	}
	value := buttonRef{Alert: a.ID, Finding: f.ID}.encode()
	plain := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
	}
	var els []slack.BlockElement
	if f.Status == ledger.FindingOpen {
		els = append(els, slack.NewButtonBlockElement(actionAck, value, plain("Acknowledge")).WithStyle(slack.StylePrimary))
	}
	els = append(els, slack.NewButtonBlockElement(actionResolve, value, plain("Resolve…")))
	if page := findingPage(cfg, f.ID); page != "" {
		els = append(els, slack.NewButtonBlockElement(actionOpen, "", plain("Open in console")).WithURL(page))
	}
	return append(out, slack.NewActionBlock(actionsBlockID, els...))
}

// resolveDialog is the modal that asks for the note of a resolution.
func resolveDialog(ref buttonRef, f ledger.Finding) slack.ModalViewRequest {
	plain := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, false, false)
	}
	input := slack.NewPlainTextInputBlockElement(plain("What was done, or why it needs nothing"), noteActionID).
		WithMultiline(true).WithMaxLength(maxNote)
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  plain("Resolve finding"),
		Submit: plain("Resolve"),
		Close:  plain("Cancel"),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			section(kindTitle(f.Kind) + " on " + providerName(f.Provider) + " · " + amountText(f.AtRisk) + " at risk\nFinding " + code(scrubID(f.ID))),
			slack.NewInputBlock(noteBlockID, plain("Note"), nil, input),
		}},
		PrivateMetadata: ref.encode(),
		CallbackID:      resolveCallbackID,
	}
}
