package ledger

import (
	"context"
	"errors"
	"strings"
	"time"
)

// PullRegistration records that a provider was told, once, that one of its
// short codes (M-Pesa: a PayBill or till number) may be pulled, as its Pull
// Transactions API requires before it serves a pull. The record keeps who or
// what registered, when, with which callback URL and nominated number, and
// the provider's answer, so that the registration is made again only when
// someone asks for it.
type PullRegistration struct {
	Provider  string
	ShortCode string
	// RegisteredAt is when the provider accepted the registration, in UTC.
	RegisteredAt time.Time
	// By says who or what registered: "cli:NAME" for a person on the
	// command line, "serve:HOST" for `reconcile serve` at its start.
	By string
	// CallbackURL is the URL given to the provider, with any secret path
	// token in it hidden.
	CallbackURL string
	// NominatedNumber is the nominated phone number given, masked
	// (2547****0000): the books never hold it whole.
	NominatedNumber string
	// ResponseRef is the provider's id of its answer (Daraja's
	// ResponseRefID).
	ResponseRef string
	// Status and Description are the provider's answer (Daraja's
	// ResponseStatus, 1000 registered or 1001 already registered, and its
	// ResponseDescription).
	Status      string
	Description string
}

// Validate checks that r names what it registered and when, and that the
// nominated number it keeps is masked.
func (r PullRegistration) Validate() error {
	switch {
	case strings.TrimSpace(r.Provider) == "":
		return &FieldError{Field: "provider", Err: errEmpty}
	case strings.TrimSpace(r.ShortCode) == "":
		return &FieldError{Field: "short_code", Err: errEmpty}
	case r.RegisteredAt.IsZero():
		return &FieldError{Field: "registered_at", Err: errEmpty}
	case strings.TrimSpace(r.By) == "":
		return &FieldError{Field: "by", Err: errors.New("is empty: say who or what registered")}
	case MaskMSISDNs(r.NominatedNumber) != r.NominatedNumber:
		return &FieldError{Field: "nominated_number", Err: errors.New("is a whole phone number: keep it masked")}
	}
	return nil
}

// PullRegistrationStore keeps the registrations for pulling.
type PullRegistrationStore interface {
	// RecordPullRegistration records r (after Validate), replacing the
	// record of the same provider and short code: a registration made
	// again is the one kept.
	RecordPullRegistration(ctx context.Context, r PullRegistration) error
	// GetPullRegistration returns the record of a provider's short code;
	// ErrNotFound when it was never registered.
	GetPullRegistration(ctx context.Context, provider, shortCode string) (PullRegistration, error)
}
