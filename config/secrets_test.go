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

// TestRedact: every secret value and the database password are scrubbed.
func TestRedact(t *testing.T) {
	t.Parallel()
	c := Default()
	c.DatabaseURL = "postgres://app:s3cretpass@db.internal/books"
	c.Providers.Stripe.APIKey = "sk_test_redact_0123456789"
	got := c.Redact("dial postgres://app:s3cretpass@db.internal/books (s3cretpass) with sk_test_redact_0123456789")
	if strings.Contains(got, "s3cretpass") || strings.Contains(got, "sk_test_redact") {
		t.Errorf("not redacted: %s", got)
	}
}

// TestLoadChecked: a configuration that loads and validates may still miss
// what delivering needs; delivering checks that too.
func TestLoadChecked(t *testing.T) {
	file := t.TempDir() + "/config.yaml"
	if err := os.WriteFile(file, []byte("database_url: sqlite:books.db\nevents:\n  endpoints: [\"https://example.com/hook\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadChecked(Source{File: file}, false)
	if err != nil {
		t.Fatalf("without delivering: %v", err)
	}
	if _, err := LoadChecked(Source{File: file}, true); err == nil || !strings.Contains(err.Error(), "events.signing_secret") {
		t.Errorf("delivering without a signing secret: %v", err)
	}
	if (Source{File: file}).DefaultDatabase(c) || (Source{DatabaseURL: "sqlite:other.db"}).DefaultDatabase(Default()) {
		t.Error("a database the file or the command line names is the default")
	}
}
