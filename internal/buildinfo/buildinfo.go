package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what `reconcile version` prints: the module version (the tag
// given to go install, or a pseudo-version or "(devel)" for a source build),
// the VCS revision and commit time stamped by the go command, and the Go
// version the binary was built with.
type Info struct {
	Module   string
	Version  string
	Revision string
	Time     string
	Modified bool
	Go       string
	Platform string
}

// Read reads the build information the go command stamped into the
// binary; version, when set (at link time), overrides the module version.
func Read(version string) Info {
	b := Info{Module: "github.com/reconcilehq/reconcile", Version: "(devel)", Go: runtime.Version(),
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

// Line is the one-line form printed by --version.
func (b Info) Line() string {
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

// Long is the form printed by `reconcile version`: one field per line.
func (b Info) Long() string {
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
