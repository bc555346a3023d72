package mpesa

import (
	"fmt"
	"strings"
)

// Accounts are the paybills and tills of one M-Pesa provider: the default
// one (the provider's short code, whose account is "") and the others,
// each its own account named by its short code.
type Accounts struct {
	// Default is the provider's own short code; empty when it is not
	// configured.
	Default string
	// Others are the other accounts' short codes.
	Others []string
}

// Of returns the account of a payment to shortCode: "" for the default
// short code (and for a payment that names none when no other account is
// configured), the short code itself for another account. A short code
// that is none of them is refused: its payment is kept in quarantine rather
// than counted in the wrong account's books. A nil a takes every payment as
// the default account's.
func (a *Accounts) Of(shortCode string) (string, error) {
	sc := strings.TrimSpace(shortCode)
	if a == nil || len(a.Others) == 0 || sc == a.Default {
		return "", nil
	}
	for _, o := range a.Others {
		if sc == o {
			return o, nil
		}
	}
	return "", fmt.Errorf("short code %q is not one of the configured accounts (%s)", sc, a.list())
}

func (a *Accounts) list() string {
	all := append([]string{a.Default + " (default)"}, a.Others...)
	return strings.Join(all, ", ")
}
