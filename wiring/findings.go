package wiring

import (
	"time"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/schedule"
)

// FindingsQuery is a findings list as a command line asks for it.
type FindingsQuery struct {
	// Provider is the provider listed, or "" for every one.
	Provider string
	// Account is the account of Provider listed (a short code, or
	// "default"), when AccountSet.
	Account    string
	AccountSet bool
	// Statuses and Kinds are the statuses and kinds listed, as given
	// (findings.ParseStatuses, findings.ParseKinds).
	Statuses, Kinds []string
	Limit           int
}

// FindingsFilter checks q against the configuration, before the books are
// opened, and returns the filter it asks for, without its window
// (findings.ListWindow): the provider must be configured (Setup), an
// account needs its provider and must be one of its accounts, and the
// statuses and kinds must be known. A bad value is a *schedule.FlagError
// naming the flag.
func FindingsFilter(cfg config.Config, clock func() time.Time, q FindingsQuery) (ledger.FindingFilter, error) {
	f := ledger.FindingFilter{Provider: q.Provider, Limit: q.Limit}
	if q.Provider != "" {
		setup, err := Setup(cfg, clock, q.Provider)
		if err != nil {
			return f, err
		}
		if q.AccountSet {
			acct, err := config.ParseAccount(setup, q.Account)
			if err != nil {
				return f, schedule.Flagf("account", "--account: %v", err)
			}
			f.Accounts = []string{acct}
		}
	} else if q.AccountSet {
		return f, schedule.Flagf("account", "--account needs --provider: an account belongs to one provider")
	}
	var err error
	if f.Statuses, err = findings.ParseStatuses(q.Statuses); err != nil {
		return f, schedule.Flagf("status", "--status %v", err)
	}
	if f.Kinds, err = findings.ParseKinds(q.Kinds); err != nil {
		return f, schedule.Flagf("kind", "--kind %v", err)
	}
	return f, nil
}
