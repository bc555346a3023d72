package charge_test

import (
	"context"
	"testing"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/providers"
)

type chargeOnly struct{}

func (chargeOnly) Charge(context.Context, providers.ChargeRequest) (providers.ChargeResult, error) {
	return providers.ChargeResult{}, nil
}

type refunder struct{ chargeOnly }

func (refunder) Refund(context.Context, providers.RefundRequest) (providers.ChargeResult, error) {
	return providers.ChargeResult{}, nil
}

type switched struct {
	refunder
	on bool
}

func (s switched) RefundsEnabled() bool { return s.on }

// TestCanRefund: a refund job is made only for a provider whose charger
// refunds and, when it has a switch, has it on.
func TestCanRefund(t *testing.T) {
	t.Parallel()
	s := charge.New(charge.Deps{Chargers: map[string]providers.Charger{
		"plain": chargeOnly{}, "refunds": refunder{}, "off": switched{on: false}, "on": switched{on: true},
	}}, charge.Config{})
	for name, want := range map[string]bool{"plain": false, "refunds": true, "off": false, "on": true, "absent": false} {
		if got := s.CanRefund(name); got != want {
			t.Errorf("CanRefund(%s) = %v, want %v", name, got, want)
		}
	}
}
