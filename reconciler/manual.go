package reconciler

import (
	"context"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// loadManualLinks gives m the links people made by hand between the span's
// transactions and intents (reconcile findings match), first in the
// linking order. An intent outside the span that such a link names is
// added too, with its provider references, so that the link holds however
// old the intent is.
func (r *Reconciler) loadManualLinks(ctx context.Context, p Params, m *matcher.Matcher, lo, hi time.Time) error {
	var later []ledger.ManualLink
	err := r.store.ScanManualLinks(ctx, ledger.TxnFilter{Provider: p.Provider, Account: p.Account, From: lo, To: hi}, func(l ledger.ManualLink) error {
		ok, err := m.AddManualLink(l.TxnID, l.IntentKey)
		if err == nil && !ok {
			later = append(later, l)
		}
		return err
	})
	if err != nil || len(later) == 0 {
		return err
	}
	keys := make([]string, 0, len(later))
	for _, l := range later {
		keys = append(keys, l.IntentKey)
	}
	ins, err := r.store.GetIntents(ctx, keys)
	if err != nil {
		return err
	}
	if err := r.addIntents(ctx, m, p.Provider, ins); err != nil {
		return err
	}
	for _, l := range later {
		if _, err := m.AddManualLink(l.TxnID, l.IntentKey); err != nil {
			return err
		}
	}
	return nil
}
