package database

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/ledger/sqlitestore"
)

// DefaultURL is the embedded default: a SQLite file in the working directory.
const DefaultURL = "sqlite:reconcile.db"

// Options tune Open.
type Options struct {
	// MaxConns caps the PostgreSQL pool; 0 keeps the default.
	MaxConns int32
	// SearchPath sets the PostgreSQL schema search path (tests use one
	// schema each).
	SearchPath string
}

// Engine returns the engine a URL names, or an error naming the accepted forms.
func Engine(rawURL string) (ledger.Engine, error) {
	switch {
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		return ledger.EnginePostgres, nil
	case strings.HasPrefix(rawURL, "sqlite:"):
		return ledger.EngineSQLite, nil
	}
	return "", fmt.Errorf("database url %q: want postgres://... or sqlite:PATH", Redact(rawURL))
}

// SQLitePath returns the file path of a sqlite: URL (sqlite:PATH or sqlite://PATH).
func SQLitePath(rawURL string) string {
	p := strings.TrimPrefix(rawURL, "sqlite:")
	return strings.TrimPrefix(p, "//")
}

// Open opens the ledger store named by rawURL.
func Open(ctx context.Context, rawURL string, opts Options) (ledger.Store, error) {
	engine, err := Engine(rawURL)
	if err != nil {
		return nil, err
	}
	switch engine {
	case ledger.EnginePostgres:
		s, err := pgstore.Open(ctx, rawURL, pgstore.Config{MaxConns: opts.MaxConns, SearchPath: opts.SearchPath})
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", Redact(rawURL), err)
		}
		return s, nil
	default:
		s, err := sqlitestore.Open(ctx, SQLitePath(rawURL))
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", Redact(rawURL), err)
		}
		return s, nil
	}
}

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)

// Redact hides the password in a database URL or keyword/value connection
// string, keeping the rest readable.
func Redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		for k := range q {
			if strings.EqualFold(k, "password") {
				q.Set(k, "xxxxx")
			}
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	return kvPassword.ReplaceAllString(raw, "${1}xxxxx")
}
