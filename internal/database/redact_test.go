package database

import (
	"strings"
	"testing"
)

// TestRedactEveryURLShape: the password never survives, whatever the form
// of the connection string, and the rest stays readable.
func TestRedactEveryURLShape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"postgres://app:s3cret@db.example:5432/books?sslmode=require", "postgres://app:xxxxx@db.example:5432/books?sslmode=require"},
		{"postgres://u:s3cret@/db?host=/run/pg", "postgres://u:xxxxx@/db?host=/run/pg"},
		{"postgresql://u:s3cret@/db?host=%2Frun%2Fpg", "postgresql://u:xxxxx@/db?host=%2Frun%2Fpg"},
		{"postgres:///db?host=/run/pg&password=s3cret&sslmode=disable", "postgres:///db?host=/run/pg&password=xxxxx&sslmode=disable"},
		{"postgres://u@h/db?sslpassword=s3cret", "postgres://u@h/db?sslpassword=xxxxx"},
		{"postgres://u@h/db?PASSWORD=s3cret", "postgres://u@h/db?PASSWORD=xxxxx"},
		{"postgres://u:p%40ss%3As3cret@h/db", "postgres://u:xxxxx@h/db"},
		{"postgres://u:s3cret@h1:5432,h2:5432/db", "postgres://u:xxxxx@h1:5432,h2:5432/db"},
		{"postgres://u:s3cr%zzet@h/db", "postgres://u:xxxxx@h/db"},
		{"host=/run/pg user=app password=s3cret dbname=books", "host=/run/pg user=app password=xxxxx dbname=books"},
		{"host=db user=app password='s3 cret' dbname=books", "host=db user=app password=xxxxx dbname=books"},
		{"host=db PASSWORD = s3cret sslpassword=s3cret", "host=db PASSWORD = xxxxx sslpassword=xxxxx"},
		{"postgres://app@db.example/books", "postgres://app@db.example/books"},
		{"sqlite:reconcile.db", "sqlite:reconcile.db"},
		{"sqlite:/tmp/s3cret-dir/reconcile.db", "sqlite:/tmp/s3cret-dir/reconcile.db"},
	} {
		got := Redact(tc.in)
		if got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(tc.in, "s3cret") && !strings.HasPrefix(tc.in, "sqlite") && strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) leaks the password: %q", tc.in, got)
		}
		if p := Password(tc.in); strings.Contains(tc.in, "s3cret") && !strings.HasPrefix(tc.in, "sqlite") &&
			!strings.Contains(p, "s3") && !strings.Contains(tc.in, "%zz") {
			t.Errorf("Password(%q) = %q", tc.in, p)
		}
	}
}
