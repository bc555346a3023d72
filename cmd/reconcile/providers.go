package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
)

func newProvidersCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "providers",
		Short: "What the providers must be told before they serve us: registration for pulling",
	}
	cmd.AddCommand(newProvidersRegisterCmd(a))
	return cmd
}

func newProvidersRegisterCmd(a *app) *cobra.Command {
	var (
		force bool
		actor string
	)
	cmd := &cobra.Command{
		Use:   "register PROVIDER",
		Short: "Register the provider's short code for pulling (M-Pesa's Pull Transactions API), once, and record it",
		Long: `M-Pesa's Pull Transactions API serves a pull only for a short code registered for pulling
(providers.mpesa.short_code, with the nominated number RECONCILE_PROVIDERS_MPESA_PULL_NOMINATED_NUMBER
and the callback URL built from providers.mpesa.callbacks.public_url). This registers it and records
the registration in the books: when, by whom, the callback URL (its path token hidden), the masked
nominated number and Daraja's answer. A short code the books record as registered is not registered
again unless --force says so (after a pull failed with "not registered for pulling": Safaricom no
longer has it). Daraja's "already registered" (1001) is success.

reconcile serve registers at its start every configured short code the books do not record, so
this is for registering before the first run or again by hand.

Exit codes: 0 registered or recorded already; 1 error; 2 usage error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			provider := args[0]
			if _, err := a.setup(provider); err != nil {
				return err
			}
			who, err := cliActor(actor)
			if err != nil {
				return err
			}
			d, err := a.resolve(ctx, storeCreate)
			if err != nil {
				return err
			}
			p := d.providers[provider]
			switch {
			case p.Registrar == nil && provider == "mpesa":
				return fmt.Errorf("providers register mpesa: M-Pesa is not pulled: set providers.mpesa.pull.enabled " +
					"(with the short code and the Daraja credentials) to pull and register")
			case p.Registrar == nil:
				return fmt.Errorf("providers register %s: %s needs no registration for pulling", provider, provider)
			case p.RegistrarSetting != "":
				return fmt.Errorf("providers register %s: registering for pulling needs %s", provider, p.RegistrarSetting)
			}
			reg, asked, err := p.Registrar.EnsureRegistered(ctx, d.store, "cli:"+who.Name, force)
			if err != nil {
				return err
			}
			writeRegistration(a.stdout, provider, reg, asked, d.zones[provider])
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "register again even if the books record the short code as registered")
	cmd.Flags().StringVar(&actor, "actor", "", "who registers, recorded with the registration (default: the operating system user)")
	return cmd
}

// writeRegistration says what registering did: what Daraja answered, or
// the registration the books hold already, with its time in the
// provider's zone.
func writeRegistration(w io.Writer, provider string, reg ledger.PullRegistration, asked bool, zone *time.Location) {
	if asked {
		fmt.Fprintf(w, "%s: short code %s registered for pulling (status %s: %s; ref %s)\n", provider, reg.ShortCode,
			reg.Status, reg.Description, reg.ResponseRef)
	} else {
		fmt.Fprintf(w, "%s: short code %s is registered for pulling already, since %s by %s (ref %s); --force registers it again\n",
			provider, reg.ShortCode, report.LocalTime(reg.RegisteredAt, zone), reg.By, reg.ResponseRef)
	}
	fmt.Fprintf(w, "  nominated number %s, callback %s\n", reg.NominatedNumber, reg.CallbackURL)
}
