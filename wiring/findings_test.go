package wiring_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/schedule"
	"github.com/reconcilehq/reconcile/wiring"
)

// TestFindingsFilter: a findings list's flags become its filter, checked
// against the configuration; a bad one is an error naming the flag.
func TestFindingsFilter(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	f, err := wiring.FindingsFilter(cfg, clock, wiring.FindingsQuery{Provider: "mpesa", Account: "default", AccountSet: true,
		Statuses: []string{"open"}, Kinds: []string{"duplicate_charge"}, Limit: 5})
	if err != nil || f.Provider != "mpesa" || !slices.Equal(f.Accounts, []string{""}) || f.Limit != 5 ||
		!slices.Equal(f.Statuses, []ledger.FindingStatus{ledger.FindingOpen}) || !slices.Equal(f.Kinds, []ledger.Kind{ledger.KindDuplicateCharge}) {
		t.Errorf("filter: %+v (%v)", f, err)
	}
	for _, c := range []struct {
		q    wiring.FindingsQuery
		flag string
		msg  string
	}{
		{wiring.FindingsQuery{Provider: "paypal"}, "provider", ""},
		{wiring.FindingsQuery{Provider: "mpesa", Account: "999", AccountSet: true}, "account", ""},
		{wiring.FindingsQuery{Account: "default", AccountSet: true}, "account", "--account needs --provider: an account belongs to one provider"},
		{wiring.FindingsQuery{Statuses: []string{"closed"}}, "status", `--status "closed": want open, acknowledged, resolved or all`},
		{wiring.FindingsQuery{Kinds: []string{"dup"}}, "kind", ""},
	} {
		_, err := wiring.FindingsFilter(cfg, clock, c.q)
		var fe *schedule.FlagError
		if !errors.As(err, &fe) || fe.Flag != c.flag || (c.msg != "" && err.Error() != c.msg) {
			t.Errorf("%+v: %v, want a --%s error %q", c.q, err, c.flag, c.msg)
		}
	}
}
