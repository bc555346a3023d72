package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	// Neither form reads the configuration: a broken config file is no
	// obstacle.
	bad := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(bad, []byte("nonsense: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, short, errOut := cli(t, "--version", "--config", bad)
	if code != 0 || !strings.HasPrefix(short, "reconcile ") || !strings.Contains(short, runtime.Version()) || strings.Count(short, "\n") != 1 {
		t.Fatalf("--version: %d %q %q", code, short, errOut)
	}
	code, long, errOut := cli(t, "version", "--config", bad)
	if code != 0 {
		t.Fatalf("version: %d %q", code, errOut)
	}
	for _, want := range []string{"version:", "module:      github.com/reconcilehq/reconcile", "go:          " + runtime.Version()} {
		if !strings.Contains(long, want) {
			t.Errorf("version output lacks %q:\n%s", want, long)
		}
	}
}
