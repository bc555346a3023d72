package mpesa

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// Daraja's ResponseStatus of a registration for pulling.
const (
	RegisteredNew     = "1000"
	RegisteredAlready = "1001"
)

// RegisterCommand is the command that registers the configured short code
// for pulling; errors about a short code that is not registered name it.
const RegisterCommand = "reconcile providers register mpesa"

// ErrNotRegistered reports a pull that Daraja refused because the short
// code was never registered for pulling (400.002.02 Invalid ShortCode).
// The error that wraps it names the command that registers it.
var ErrNotRegistered = errors.New("is not registered for pulling")

// Registration is Daraja's answer to a registration for pulling.
type Registration struct {
	ShortCode string
	// RefID is Daraja's ResponseRefID.
	RefID string
	// Status is RegisteredNew or RegisteredAlready; Description is
	// Daraja's ResponseDescription.
	Status      string
	Description string
}

var _ providers.PullRegistrar = (*Puller)(nil)

// EnsureRegistered registers the puller's short code for pulling unless
// book records it as registered already, and records Daraja's answer in
// book, masking the nominated number and hiding the callback path token
// (PullConfig.CallbackSecret). With force it registers again whatever the
// books say. It returns the registration recorded (or the one found) and
// whether Daraja was asked. by says who or what registers ("cli:NAME",
// "serve:HOST").
func (p *Puller) EnsureRegistered(ctx context.Context, book ledger.PullRegistrationStore, by string, force bool) (ledger.PullRegistration, bool, error) {
	if !force {
		reg, err := book.GetPullRegistration(ctx, Provider, p.pc.ShortCode)
		if err == nil {
			return reg, false, nil
		}
		if !errors.Is(err, ledger.ErrNotFound) {
			return ledger.PullRegistration{}, false, fmt.Errorf("mpesa: pull register %s: %w", p.pc.ShortCode, err)
		}
	}
	ans, err := p.Register(ctx)
	if err != nil {
		return ledger.PullRegistration{}, true, err
	}
	reg := ledger.PullRegistration{Provider: Provider, ShortCode: p.pc.ShortCode, RegisteredAt: p.d.cfg.Clock().UTC(), By: by,
		CallbackURL: p.hiddenCallbackURL(), NominatedNumber: ledger.MaskCustomer(p.pc.NominatedNumber),
		ResponseRef: ans.RefID, Status: ans.Status, Description: ans.Description}
	if err := book.RecordPullRegistration(ctx, reg); err != nil {
		return ledger.PullRegistration{}, true, fmt.Errorf("mpesa: pull register %s: registered (ref %s) but not recorded: %w",
			p.pc.ShortCode, ans.RefID, err)
	}
	return reg, true, nil
}

// PullShortCode returns the short code the puller pulls for.
func (p *Puller) PullShortCode() string { return p.pc.ShortCode }

// hiddenCallbackURL is the callback URL with its secret path token
// replaced, as the books and logs may show it.
func (p *Puller) hiddenCallbackURL() string {
	if p.pc.CallbackSecret == "" {
		return p.pc.CallbackURL
	}
	return strings.ReplaceAll(p.pc.CallbackURL, p.pc.CallbackSecret, "[path token]")
}

// notRegistered tells, from Daraja's answer to a pull query, that the
// short code is not registered for pulling: 400.002.02 (invalid field)
// about the short code, or about no field it names.
func notRegistered(perr *providers.Error) bool {
	if perr.Code != "400.002.02" {
		return false
	}
	msg := strings.ToLower(perr.Message)
	for _, other := range []string{"startdate", "enddate", "offsetvalue", "json"} {
		if strings.Contains(msg, other) {
			return false
		}
	}
	return true
}
