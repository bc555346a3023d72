package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version overrides the module version from the build info when set at link
// time (-ldflags "-X main.version=v1.2.3"), for builds from a source tree
// without VCS data such as a container build.
var version string

// buildInfo is what `reconcile version` prints: the module version (the tag
// given to go install, or a pseudo-version or "(devel)" for a source build),
// the VCS revision and commit time stamped by the go command, and the Go
// version the binary was built with.
type buildInfo struct {
	Module   string
	Version  string
	Revision string
	Time     string
	Modified bool
	Go       string
	Platform string
}

func readBuildInfo() buildInfo {
	b := buildInfo{Module: "github.com/reconcilehq/reconcile", Version: "(devel)", Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Path != "" {
			b.Module = info.Main.Path
		}
		if info.Main.Version != "" {
			b.Version = info.Main.Version
		}
		if info.GoVersion != "" {
			b.Go = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if version != "" {
		b.Version = version
	}
	return b
}

// line is the one-line form printed by --version.
func (b buildInfo) line() string {
	parts := []string{"reconcile", b.Version}
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if b.Modified {
			rev += "+modified"
		}
		parts = append(parts, "commit "+rev)
	}
	if b.Time != "" {
		parts = append(parts, b.Time)
	}
	return strings.Join(append(parts, b.Go, b.Platform), " ")
}

// long is the form printed by `reconcile version`: one field per line.
func (b buildInfo) long() string {
	var s strings.Builder
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&s, "%-12s %s\n", k+":", v)
		}
	}
	row("version", b.Version)
	row("module", b.Module)
	rev := b.Revision
	if rev != "" && b.Modified {
		rev += " (modified)"
	}
	row("commit", rev)
	row("commit time", b.Time)
	row("go", b.Go)
	row("platform", b.Platform)
	return s.String()
}

// setVersion gives root a --version flag printing the one-line form.
func setVersion(root *cobra.Command) {
	root.Version = readBuildInfo().line()
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
			_, err := fmt.Fprint(a.stdout, readBuildInfo().long())
			return err
		},
	}
}
