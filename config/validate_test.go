package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestValidateOrder: several mistakes are reported in the same, sorted
// order on every run (they come from maps, whose order varies).
func TestValidateOrder(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, `workers:
  charges: -1
  events: -2
  alerts: -3
  runs: -4
providers:
  mpesa:
    settlement_grace: -1s
    http_timeout: -1s
  stripe:
    settlement_grace: -1s
    timeout: -1s
`)
	var first string
	for i := range 8 {
		_, err := parse(cfg)
		if err == nil {
			t.Fatal("a config with negative settings loaded")
		}
		errOut := err.Error()
		var lines []string
		for _, l := range strings.Split(errOut, "\n") {
			if strings.Contains(l, "config ") {
				lines = append(lines, l[strings.Index(l, "config "):])
			}
		}
		if len(lines) < 8 {
			t.Fatalf("want at least 8 mistakes reported, got:\n%s", errOut)
		}
		if !slices.IsSorted(lines) {
			t.Errorf("mistakes not sorted:\n%s", strings.Join(lines, "\n"))
		}
		if i == 0 {
			first = errOut
		} else if errOut != first {
			t.Fatalf("run %d reports differently:\n%s\nthen:\n%s", i, first, errOut)
		}
	}
}

func TestAdminListenIsValidated(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"http:\n  listen: :8080\n  admin_listen: :8080\n": "http.admin_listen: must differ from http.listen",
		"http:\n  admin_listen: \"\"\n":                   "http.admin_listen: is required",
	} {
		_, err := parse(writeConfig(t, body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}

// TestReadReplicaIsValidated: a read replica is PostgreSQL beside a
// PostgreSQL primary; SQLite has none. The errors name the key.
func TestReadReplicaIsValidated(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"database_read_url: postgres://replica/db\n":                                   "config database_read_url: a read replica needs PostgreSQL: database_url is SQLite",
		"database_url: postgres://primary/db\ndatabase_read_url: sqlite:replica.db\n":  "config database_read_url: a read replica is a PostgreSQL standby",
		"database_url: postgres://primary/db\ndatabase_read_url: mysql://replica/db\n": "config database_read_url: database url",
		"database_url: postgres://primary/db\ndatabase_read_max_lag: 0s\n":             "config database_read_max_lag: must be a positive duration",
	} {
		_, err := parse(writeConfig(t, body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	c, err := parse(writeConfig(t, "database_url: postgres://primary/db\ndatabase_read_url: postgres://u:s3cretpw@replica/db\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseReadMaxLag != 30*time.Second || !slices.Contains(c.SecretValues(), "s3cretpw") {
		t.Errorf("max lag %s, secrets %q: want 30s and the replica's password scrubbed", c.DatabaseReadMaxLag, c.SecretValues())
	}
}
