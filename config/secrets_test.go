package config

import (
	"os"
	"strings"
	"testing"
)

// TestEnvExampleNamesEverySecret: deploy/reconcile.env.example, the file an
// operator copies, names the environment variable of every secret of the
// configuration, and nothing that is not a setting.
func TestEnvExampleNamesEverySecret(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../deploy/reconcile.env.example")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, k := range SecretKeys() {
		if env := EnvName(k); !strings.Contains(text, "#"+env+"=") {
			t.Errorf("reconcile.env.example does not name %s (the secret %s)", env, k)
		}
	}
}
