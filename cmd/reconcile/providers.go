package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/report"
	"github.com/reconcilehq/reconcile/wiring"
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
		force          bool
		actor, account string
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

An account listed under providers.mpesa.accounts is registered with --account SHORT_CODE.

reconcile serve registers at its start every configured short code the books do not record, so
this is for registering before the first run or again by hand.

Exit codes: 0 registered or recorded already; 1 error; 2 usage error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			provider := args[0]
			setup, err := a.setup(provider)
			if err != nil {
				return err
			}
			acct, err := config.ParseAccount(setup, account)
			if err != nil {
				return usagef("--account: %v", err)
			}
			who, err := cliActor(actor)
			if err != nil {
				return err
			}
			return a.with(cmd.Context(), wiring.Create, func(ctx context.Context, d *wiring.Parts) error {
				reg, asked, err := d.Providers[provider].RegisterForPulling(ctx, provider, acct, d.Store, "cli:"+who.Name, force)
				if err != nil {
					return err
				}
				return report.WriteRegistration(a.stdout, provider, reg, asked, d.Zones[provider])
			})
		},
	}
	cmd.Flags().StringVar(&account, "account", "", `the account whose short code to register (providers.mpesa.accounts); default the provider's own`)
	cmd.Flags().BoolVar(&force, "force", false, "register again even if the books record the short code as registered")
	cmd.Flags().StringVar(&actor, "actor", "", "who registers, recorded with the registration (default: the operating system user)")
	return cmd
}
