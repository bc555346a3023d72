package main

import (
	"fmt"
	"os/user"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/ledger"
)

// addActorFlag adds --actor to a command that records a decision.
func addActorFlag(cmd *cobra.Command, name *string) {
	cmd.Flags().StringVar(name, "actor", "", "who acts, recorded in the history (default: the operating system user)")
}

// cliActor is the person acting from the command line: --actor, or the
// operating system user.
func cliActor(flag string) (ledger.Actor, error) {
	name := strings.TrimSpace(flag)
	if name == "" {
		u, err := user.Current()
		if err != nil || strings.TrimSpace(u.Username) == "" {
			return ledger.Actor{}, usagef("--actor: cannot tell who you are from the operating system (%v): pass --actor NAME", err)
		}
		name = u.Username
	}
	a := ledger.Actor{Name: name, Surface: ledger.SurfaceCLI}
	if err := a.Validate(); err != nil {
		return ledger.Actor{}, usagef("--actor %q: %v", name, err)
	}
	return a, nil
}

// notFound says what to do about an id that names nothing.
func notFound(what, id, list string) error {
	return fmt.Errorf("%s %s: no such %s (see `reconcile %s`)", what, id, what, list)
}
