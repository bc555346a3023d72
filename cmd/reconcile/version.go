package main

import (
	"fmt"

	"github.com/reconcilehq/reconcile/internal/buildinfo"

	"github.com/spf13/cobra"
)

// version overrides the module version from the build info when set at link
// time (-ldflags "-X main.version=v1.2.3"), for builds from a source tree
// without VCS data such as a container build.
var version string

// setVersion gives root a --version flag printing the one-line form.
func setVersion(root *cobra.Command) {
	root.Version = buildinfo.Read(version).Line()
	root.SetVersionTemplate("{{.Version}}\n")
	// Declared here rather than left to cobra, so that the command finder
	// knows it takes no value (--version --config FILE works).
	root.Flags().Bool("version", false, "print the version and exit")
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this binary",
		Long: `Print what this binary was built from, read from the build information the go command
stamps into it: the module version (the tag given to go install, a pseudo-version, or (devel)
for a build from a source tree), the VCS commit and its time, and the Go version. It reads
no configuration and opens no database.`,
		Args: cobra.NoArgs,
		// No configuration is loaded: the version prints whatever the
		// config says.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(a.stdout, buildinfo.Read(version).Long())
			return err
		},
	}
}
