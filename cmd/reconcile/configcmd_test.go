package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/reconcilehq/reconcile/config"
)

// TestConfigCommand: `reconcile config example` and `config docs` print the
// generated files, or write them with --output, without reading a config
// file (a broken one does not stop them).
func TestConfigCommand(t *testing.T) {
	t.Parallel()
	broken := writeConfig(t, "log:\n  levle: info\n")
	code, out, errOut := cli(t, "--config", broken, "config", "example")
	if code != 0 || out != string(config.ExampleYAML()) {
		t.Errorf("config example: exit %d, %s", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "configuration.md")
	if code, _, errOut := cli(t, "config", "docs", "--output", file); code != 0 {
		t.Fatalf("config docs: exit %d, %s", code, errOut)
	}
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, config.Markdown()) {
		t.Errorf("config docs --output wrote %d bytes (%v), want docs/configuration.md", len(got), err)
	}
	if code, _, _ := cli(t, "config", "nonsense"); code != 2 {
		t.Errorf("config nonsense: exit %d, want 2", code)
	}
}
