package buildinfo

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestVersionForms(t *testing.T) {
	t.Parallel()
	b := Info{Module: "github.com/reconcilehq/reconcile", Version: "v0.3.0", Revision: "8f35fb6094b3a9cd7c800defbbe48cc331f40353",
		Time: "2026-11-30T07:56:26Z", Modified: true, Go: "go1.26.8", Platform: "linux/amd64"}
	if got, want := b.Line(), "reconcile v0.3.0 commit 8f35fb6094b3+modified 2026-11-30T07:56:26Z go1.26.8 linux/amd64"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
	want := `version:     v0.3.0
module:      github.com/reconcilehq/reconcile
commit:      8f35fb6094b3a9cd7c800defbbe48cc331f40353 (modified)
commit time: 2026-11-30T07:56:26Z
go:          go1.26.8
platform:    linux/amd64
`
	if got := b.Long(); got != want {
		t.Errorf("long =\n%s\nwant\n%s", got, want)
	}
}

// TestInstallable guards `go install github.com/reconcilehq/reconcile/cmd/reconcile@latest`:
// go install refuses a main module with replace or exclude directives, and
// the binary must build without cgo (the container and released binaries are
// static) and need no file beside it.
func TestInstallable(t *testing.T) {
	t.Parallel()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "replace" || f[0] == "exclude") {
			t.Errorf("go.mod has %q: go install ...@latest refuses it", line)
		}
		if len(f) == 2 && f[0] == "module" && f[1] != "github.com/reconcilehq/reconcile" {
			t.Errorf("module path %q, want github.com/reconcilehq/reconcile (the README's go install line)", f[1])
		}
	}
	cmd := exec.Command("go", "list", "-deps", "-e", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("CGO_ENABLED=0 go list -deps: %v\n%s", err, out)
	}
}
