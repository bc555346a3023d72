package findings_test

import (
	"slices"
	"testing"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
)

func TestParseStatuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want []ledger.FindingStatus
		err  string
	}{
		{in: nil, want: nil},
		{in: []string{"open", "resolved"}, want: []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingResolved}},
		{in: []string{"open", " ALL "}, want: nil},
		{in: []string{"closed"}, err: `"closed": want open, acknowledged, resolved or all`},
	} {
		got, err := findings.ParseStatuses(c.in)
		if (err != nil || c.err != "") && (err == nil || err.Error() != c.err) {
			t.Errorf("%v: error %v, want %q", c.in, err, c.err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseKinds(t *testing.T) {
	t.Parallel()
	got, err := findings.ParseKinds([]string{"duplicate_charge", "unknown_charge"})
	if err != nil || !slices.Equal(got, []ledger.Kind{ledger.KindDuplicateCharge, ledger.KindUnknownCharge}) {
		t.Errorf("kinds: %v (%v)", got, err)
	}
	if _, err := findings.ParseKinds([]string{"dup"}); err == nil || err.Error() != `"dup": want one of `+findings.KindNames() {
		t.Errorf("unknown kind: %v", err)
	}
}
