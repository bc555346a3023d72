package alerts

import (
	"context"
	"errors"
	"log/slog"

	"github.com/slack-go/slack"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

// accept applies an Accept suggestion press once per key, as a match that
// accepts the suggestion the button carries (the findings service checks,
// in one transaction with the claim of the key, that the finding still
// suggests exactly that pair and that neither finding of it is resolved,
// then matches them as `reconcile findings match` does, with the Slack user
// as actor, and announces both resolutions). Then it redraws the message to
// say who accepted it, or tells the user why nothing was changed.
func (h *Interactions) accept(ctx context.Context, key string, ref buttonRef, channel, ts string, user slack.User) {
	if ref.Intent == "" || ref.Txn == "" || ref.Pair == "" {
		h.log.Warn("slack accept without a suggestion in its value", slog.String("finding", ref.Finding))
		return
	}
	who := actor(user)
	out, err := h.cfg.Findings.Decide(ctx, findings.Decision{Verb: findings.Match, FindingID: ref.Finding, Actor: who,
		IntentKey: ref.Intent, Suggested: &ledger.Suggestion{IntentKey: ref.Intent, TxnID: ref.Txn, FindingID: ref.Pair}, Once: key})
	f, applied := out.Finding, !out.Repeat
	if err != nil {
		h.acceptRefused(ctx, ref, channel, ts, user.ID, err)
		return
	}
	if !applied {
		h.log.Info("slack interaction repeated: applied once already", slog.String("finding", ref.Finding))
	} else {
		h.log.Info("slack suggestion accepted", slog.String("finding", ref.Finding), slog.String("actor", who.Name))
	}
	if channel == "" || ts == "" {
		return
	}
	var banner slack.Block
	if l, err := h.cfg.Store.GetManualLink(ctx, f.Provider, ref.Txn); err == nil && l.IntentKey == ref.Intent &&
		f.Status == ledger.FindingResolved {
		banner = acceptedBanner(h.cfg.Alerts, f.Provider, l)
	}
	if err := h.redraw(ctx, ref, channel, ts, f, banner); err != nil {
		h.log.Warn("slack message not updated", slog.String("finding", ref.Finding), slog.String("error", redact(err.Error(), h.secrets())))
	}
}

// acceptRefused tells the user why an Accept suggestion press changed
// nothing, in words without secrets or phone numbers; a stale suggestion
// also redraws the message to show the finding as it now stands.
func (h *Interactions) acceptRefused(ctx context.Context, ref buttonRef, channel, ts, user string, err error) {
	var (
		fe   *ledger.FieldError
		text string
	)
	switch {
	case errors.Is(err, findings.ErrSuggestionChanged):
		text = "This suggestion is out of date: the finding no longer suggests intent " + scrubID(ref.Intent) +
			" for provider charge " + scrubID(ref.Txn) + ". Nothing was changed; the message now shows the finding as it stands."
		if f, gerr := h.cfg.Store.GetFinding(ctx, ref.Finding); gerr == nil && channel != "" && ts != "" {
			if rerr := h.redraw(ctx, ref, channel, ts, f, nil); rerr != nil {
				h.log.Warn("slack message not updated", slog.String("finding", ref.Finding), slog.String("error", redact(rerr.Error(), h.secrets())))
			}
		}
	case err == findings.ErrResolved:
		text = "This finding is resolved already; nothing was changed."
	case errors.Is(err, findings.ErrResolved):
		text = "The match was refused: " + err.Error() + ". Nothing was changed."
	case errors.As(err, &fe):
		text = "The match was refused: " + fe.Err.Error() + ". Nothing was changed."
	case errors.Is(err, ledger.ErrConflict):
		var op *ledger.OpError
		msg := err.Error()
		if errors.As(err, &op) {
			msg = op.Err.Error()
		}
		text = "The match was refused: " + msg + ". Nothing was changed."
	case errors.Is(err, ledger.ErrNotFound):
		text = "That finding is not in the books; nothing was changed."
	default:
		h.log.Error("slack accept suggestion", slog.String("finding", ref.Finding), slog.String("error", redact(scrub(err.Error()), h.secrets())))
		text = "That could not be recorded; nothing was changed. Try again, or use the console."
	}
	h.log.Info("slack suggestion not accepted", slog.String("finding", ref.Finding), slog.String("reason", redact(scrub(err.Error()), h.secrets())))
	h.tell(ctx, channel, user, redact(scrub(text), h.secrets()))
}

// acceptedBanner says who accepted a suggested match, when, and what it
// linked.
func acceptedBanner(cfg Config, provider string, l ledger.ManualLink) slack.Block {
	return section(":white_check_mark: *Suggested match accepted* by " + escape(scrubActor(l.Actor)) + " " +
		timeText(l.At, cfg.zone(provider)) + ": provider charge " + code(scrubID(l.TxnID)) + " is the payment of intent " +
		code(scrubID(l.IntentKey)) + ". Both findings are resolved.")
}
