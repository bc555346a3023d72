package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/ledger"
)

var (
	slackUserID  = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	slackGroupID = regexp.MustCompile(`^S[A-Z0-9]{2,}$`)
)

func (h *Interactions) secrets() []string {
	return []string{h.cfg.Alerts.BotToken, h.cfg.SigningSecret}
}

// MaxInteractionBody bounds the body of an interaction request, in bytes.
const MaxInteractionBody = 256 << 10

// InteractionsConfig configures the Slack interactions endpoint.
type InteractionsConfig struct {
	// SigningSecret is the Slack app's signing secret. Secret; required.
	SigningSecret string
	// AllowedUsers are the Slack user ids (U…, W…) who may act.
	AllowedUsers []string
	// AllowedGroups are the Slack user-group ids (S…) whose members may
	// act. At least one user or group is required.
	AllowedGroups []string
	// Alerts is the alerts configuration (ModeBot, with Buttons): its bot
	// token answers Slack and its rendering redraws the messages.
	Alerts Config
	Store  InteractionStore
	// Findings applies the decisions (acknowledge, resolve, accept a
	// suggestion); it announces what they resolve.
	Findings *findings.Service
	// Clock stamps the history (nil: time.Now).
	Clock func() time.Time
	// HTTPClient talks to Slack (nil: one with Alerts.Timeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// InteractionStore is what the buttons read to answer and redraw (they act
// through the findings service); a ledger.Store has it.
type InteractionStore interface {
	GetAlert(ctx context.Context, id int64) (ledger.Alert, error)
	GetFinding(ctx context.Context, id string) (ledger.Finding, error)
	GetManualLink(ctx context.Context, provider, txnID string) (ledger.ManualLink, error)
	FindingHistory(ctx context.Context, findingID string) ([]ledger.HistoryEvent, error)
	GetRemedy(ctx context.Context, id int64) (ledger.Remedy, error)
}

// Interactions serves POST /slack/interactions: the Acknowledge and Resolve
// buttons of finding messages and the resolve dialog. Each request is
// checked with Slack's signing secret (slack.SecretsVerifier: a wrong
// signature, or a timestamp more than five minutes off, is refused with 401
// and changes nothing). An action is applied once: its identity is claimed
// in the books in the transaction that applies it, so a retried delivery
// (X-Slack-Retry-Num, the same action_ts) is answered without acting again,
// on any replica.
type Interactions struct {
	cfg   InteractionsConfig
	api   *slack.Client
	clock func() time.Time
	log   *slog.Logger
}

// NewInteractions checks cfg and returns the handler.
func NewInteractions(cfg InteractionsConfig) (*Interactions, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ledger.FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if cfg.SigningSecret == "" {
		bad("signing_secret", "is empty: set it in the environment")
	}
	if cfg.Alerts.Mode != ModeBot || cfg.Alerts.BotToken == "" {
		bad("mode", "interactions need bot mode with a bot token")
	}
	if len(cfg.AllowedUsers) == 0 && len(cfg.AllowedGroups) == 0 {
		bad("interactions.allowed_users", "and allowed_groups are both empty: name who may act from Slack")
	}
	for _, u := range cfg.AllowedUsers {
		if !slackUserID.MatchString(u) {
			bad("interactions.allowed_users", "%q is not a Slack user id such as U0123ABCD", u)
		}
	}
	for _, g := range cfg.AllowedGroups {
		if !slackGroupID.MatchString(g) {
			bad("interactions.allowed_groups", "%q is not a Slack user-group id such as S0123ABCD", g)
		}
	}
	if cfg.Store == nil {
		bad("store", "is nil")
	}
	if cfg.Findings == nil {
		bad("findings", "is nil")
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("alerts interactions: %w", err)
	}
	cfg.Alerts = cfg.Alerts.WithDefaults()
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: cfg.Alerts.Timeout}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	api := slack.New(cfg.Alerts.BotToken, slack.OptionAPIURL(cfg.Alerts.APIURL), slack.OptionHTTPClient(client))
	return &Interactions{cfg: cfg, api: api, clock: clock, log: log}, nil
}

func (h *Interactions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxInteractionBody+1))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	if len(body) > MaxInteractionBody {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	sv, err := slack.NewSecretsVerifier(r.Header, h.cfg.SigningSecret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		// The verifier's errors name no secret.
		h.log.Warn("slack interaction refused", slog.String("reason", err.Error()))
		http.Error(w, "signature or timestamp refused", http.StatusUnauthorized)
		return
	}
	form, err := url.ParseQuery(string(body))
	var cb slack.InteractionCallback
	if err == nil {
		err = jsonbody.Decode([]byte(form.Get("payload")), &cb, jsonbody.Options{})
	}
	var dup *jsonbody.DuplicateKeyError
	if errors.As(err, &dup) {
		http.Error(w, "payload: "+dup.Error(), http.StatusBadRequest)
		return
	}
	if err != nil {
		http.Error(w, "payload is not an interaction", http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		h.blockActions(ctx, &cb)
	case slack.InteractionTypeViewSubmission:
		var resp *slack.ViewSubmissionResponse
		switch cb.View.CallbackID {
		case resolveCallbackID:
			resp = h.resolveSubmitted(ctx, &cb)
		case remedyCallbackID, rejectCallbackID:
			resp = h.remedySubmitted(ctx, &cb)
		}
		if resp != nil {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(resp)
			return
		}
	}
	// An empty 200 acknowledges the interaction (and closes a dialog).
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
}

// actor is the Slack user as recorded in the history: "@name (U…)".
func actor(u slack.User) ledger.Actor {
	name := u.ID
	if u.Name != "" {
		name = "@" + u.Name + " (" + u.ID + ")"
	}
	return ledger.Actor{Name: truncate(name, 200), Surface: ledger.SurfaceSlack}
}

// allowed reports whether user may act: listed, or a member of a listed
// user group. A group that cannot be read counts as not including them.
func (h *Interactions) allowed(ctx context.Context, user string) bool {
	if user == "" {
		return false
	}
	if slices.Contains(h.cfg.AllowedUsers, user) {
		return true
	}
	for _, g := range h.cfg.AllowedGroups {
		members, err := h.api.GetUserGroupMembersContext(ctx, g)
		if err != nil {
			h.log.Warn("slack user group unreadable", slog.String("group", g), slog.String("error", redact(err.Error(), h.secrets())))
			continue
		}
		if slices.Contains(members, user) {
			return true
		}
	}
	return false
}

func (h *Interactions) tell(ctx context.Context, channel, user, text string) {
	if _, err := h.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false)); err != nil {
		h.log.Warn("slack ephemeral not sent", slog.String("error", redact(err.Error(), h.secrets())))
	}
}

const refusal = "You are not among the people who may act on findings from Slack; nothing was changed. Ask for your Slack user or group to be added to alerts.interactions."

func (h *Interactions) blockActions(ctx context.Context, cb *slack.InteractionCallback) {
	var act *slack.BlockAction
	for _, a := range cb.ActionCallback.BlockActions {
		if slices.Contains([]string{actionAck, actionResolve, actionAccept, actionRemedy, actionApprove, actionReject}, a.ActionID) {
			act = a
			break
		}
	}
	if act == nil {
		return // the console link, or something else
	}
	ref, ok := parseButtonRef(act.Value)
	if !ok {
		h.log.Warn("slack interaction with an unknown button value", slog.String("action", act.ActionID))
		return
	}
	channel, ts := cb.Container.ChannelID, cb.Container.MessageTs
	if channel == "" {
		channel = cb.Channel.ID
	}
	if !h.allowed(ctx, cb.User.ID) {
		h.log.Info("slack interaction refused: user may not act", slog.String("user", cb.User.ID), slog.String("finding", ref.Finding))
		h.tell(ctx, channel, cb.User.ID, refusal)
		return
	}
	// The identity of a button press: Slack sends the same action_ts when
	// it retries a delivery.
	key := strings.Join([]string{"slack", "block_actions", cb.Team.ID, channel, ts, act.ActionID, act.ActionTs, cb.User.ID}, ":")
	if act.ActionID == actionAccept {
		h.accept(ctx, key, ref, channel, ts, cb.User)
		return
	}
	if act.ActionID == actionRemedy || act.ActionID == actionApprove || act.ActionID == actionReject {
		h.remedyPressed(ctx, cb, act, ref, key, channel, ts)
		return
	}
	if act.ActionID == actionResolve {
		f, err := h.cfg.Store.GetFinding(ctx, ref.Finding)
		if err != nil {
			h.log.Error("slack resolve dialog", slog.String("finding", ref.Finding), slog.String("error", err.Error()))
			h.tell(ctx, channel, cb.User.ID, "That finding could not be read; nothing was changed.")
			return
		}
		ref.Channel, ref.TS = channel, ts
		if _, err := h.api.OpenViewContext(ctx, cb.TriggerID, resolveDialog(ref, f)); err != nil {
			h.log.Warn("slack resolve dialog not opened", slog.String("error", redact(err.Error(), h.secrets())))
		}
		return
	}
	out, err := h.cfg.Findings.Decide(ctx, findings.Decision{Verb: findings.Acknowledge, FindingID: ref.Finding,
		Actor: actor(cb.User), Once: key})
	h.after(ctx, ref, channel, ts, cb.User.ID, out.Finding, !out.Repeat, err)
}

// resolveSubmitted applies the resolve dialog; a non-nil answer keeps the
// dialog open with the error shown.
func (h *Interactions) resolveSubmitted(ctx context.Context, cb *slack.InteractionCallback) *slack.ViewSubmissionResponse {
	ref, ok := parseButtonRef(cb.View.PrivateMetadata)
	if !ok {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: "This dialog is not one of reconcile's."})
	}
	if !h.allowed(ctx, cb.User.ID) {
		h.log.Info("slack interaction refused: user may not act", slog.String("user", cb.User.ID), slog.String("finding", ref.Finding))
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: "You may not act on findings from Slack; nothing was changed."})
	}
	var note string
	if cb.View.State != nil {
		note = cb.View.State.Values[noteBlockID][noteActionID].Value
	}
	// One dialog resolves once: a retried or repeated submission of the
	// same view changes nothing.
	key := strings.Join([]string{"slack", "view_submission", cb.Team.ID, cb.View.ID}, ":")
	out, err := h.cfg.Findings.Decide(ctx, findings.Decision{Verb: findings.Resolve, FindingID: ref.Finding,
		Actor: actor(cb.User), Note: note, Once: key})
	switch {
	case errors.Is(err, findings.ErrNoteRequired):
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: "Say what was done, or why it needs nothing."})
	case errors.Is(err, findings.ErrNoteTooLong):
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: fmt.Sprintf("At most %d bytes.", findings.MaxNote)})
	case errors.Is(err, ledger.ErrConflict):
		return slack.NewErrorsViewSubmissionResponse(map[string]string{noteBlockID: "This finding is already resolved."})
	}
	h.after(ctx, ref, ref.Channel, ref.TS, cb.User.ID, out.Finding, !out.Repeat, err)
	return nil
}

// after tells the user what went wrong, or redraws the message to show the
// finding as it now stands.
func (h *Interactions) after(ctx context.Context, ref buttonRef, channel, ts, user string, f ledger.Finding, applied bool, err error) {
	switch {
	case errors.Is(err, ledger.ErrConflict):
		h.tell(ctx, channel, user, "This finding is "+string(f.Status)+" already; nothing was changed.")
	case errors.Is(err, ledger.ErrNotFound):
		h.tell(ctx, channel, user, "That finding is not in the books; nothing was changed.")
		return
	case err != nil:
		h.log.Error("slack interaction", slog.String("finding", ref.Finding), slog.String("error", err.Error()))
		h.tell(ctx, channel, user, "That could not be recorded; nothing was changed. Try again, or use the console.")
		return
	}
	if !applied {
		h.log.Info("slack interaction repeated: applied once already", slog.String("finding", ref.Finding))
	}
	if channel == "" || ts == "" {
		return
	}
	if err := h.redraw(ctx, ref, channel, ts, f, nil); err != nil {
		h.log.Warn("slack message not updated", slog.String("finding", ref.Finding), slog.String("error", redact(err.Error(), h.secrets())))
	}
}

// redraw updates the message in place (chat.update) from its alert and the
// finding as it now stands: "Acknowledged by @name", the buttons that
// still apply, or none once resolved, under banner when one is given (who
// resolved it and where, otherwise).
func (h *Interactions) redraw(ctx context.Context, ref buttonRef, channel, ts string, f ledger.Finding, banner slack.Block) error {
	a, err := h.cfg.Store.GetAlert(ctx, ref.Alert)
	if err != nil {
		return err
	}
	if a.Subject != f.ID {
		return fmt.Errorf("alert %d is not about finding %s", a.ID, f.ID)
	}
	hist, err := resolutionHistory(ctx, h.cfg.Store, f)
	if err != nil {
		return err
	}
	m, err := buildFindingMessage(h.cfg.Alerts, a, f, hist)
	if err != nil {
		return err
	}
	if banner == nil && f.Status == ledger.FindingResolved {
		banner = resolvedBanner(h.cfg.Alerts, f, hist)
	}
	if banner != nil {
		m.Blocks = append([]slack.Block{m.Blocks[0], banner}, m.Blocks[1:]...)
	}
	_, _, _, err = h.api.UpdateMessageContext(ctx, channel, ts, m.updateOptions()...)
	return err
}

// resolvedBanner says who resolved a finding (and where, from its history
// hist), when, and with what note.
func resolvedBanner(cfg Config, f ledger.Finding, hist []ledger.HistoryEvent) slack.Block {
	_, who := resolverOf(f, hist)
	if who == "" {
		who = "hand"
	}
	line := ":white_check_mark: *Resolved* by " + escape(who) + " " + timeText(f.ResolvedAt, cfg.zone(f.Provider)) + "."
	if note := escape(scrub(f.Note)); note != "" {
		line += "\n>" + strings.ReplaceAll(note, "\n", "\n>")
	}
	return section(line)
}
