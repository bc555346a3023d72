package reconciler

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// addIntents gives m those of intents that belong to provider, each with
// the provider references of its attempts: intents read one by one (open
// intents of any age, intents a manual link or a late dispute names) do
// not carry the references a scan of the span brings.
func (r *Reconciler) addIntents(ctx context.Context, m *matcher.Matcher, provider string, intents []ledger.Intent) error {
	for _, in := range intents {
		if in.Provider != provider {
			continue
		}
		atts, err := r.store.ListAttempts(ctx, in.Key)
		if err != nil {
			return err
		}
		for _, a := range atts {
			if a.ProviderRef != "" {
				in.ProviderRefs = append(in.ProviderRefs, a.ProviderRef)
			}
		}
		if err := m.AddIntent(in); err != nil {
			return err
		}
	}
	return nil
}
