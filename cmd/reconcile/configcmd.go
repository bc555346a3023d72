package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/reconcilehq/reconcile/config"
)

func newConfigCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "config",
		Short: "Print the configuration's keys, defaults and descriptions",
		// Printing the defaults reads no configuration, so a broken
		// config.yaml in the working directory does not stop it.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
	}
	printer := func(use, short string, render func() []byte) *cobra.Command {
		var output string
		sub := &cobra.Command{
			Use:   use,
			Short: short,
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if output == "" {
					_, err := a.stdout.Write(render())
					return err
				}
				if err := os.WriteFile(output, render(), 0o644); err != nil {
					return fmt.Errorf("config: %w", err)
				}
				return nil
			},
		}
		sub.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of standard output")
		return sub
	}
	c.AddCommand(
		printer("example", "Print a config file with every key at its default, described (config.example.yaml)", config.ExampleYAML),
		printer("docs", "Print the configuration reference as Markdown (docs/configuration.md)", config.Markdown),
	)
	return c
}
