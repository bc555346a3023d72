package database

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
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

// engines are the engines a database URL can name.
var engines = []engine.Opener{pgstore.Opener, sqlitestore.Opener}

// Engine returns the engine a URL names, or an error naming the accepted forms.
func Engine(rawURL string) (ledger.Engine, error) {
	o, err := opener(rawURL)
	if err != nil {
		return "", err
	}
	return o.Engine, nil
}

func opener(rawURL string) (engine.Opener, error) {
	for _, o := range engines {
		if o.Accepts(rawURL) {
			return o, nil
		}
	}
	return engine.Opener{}, fmt.Errorf("database url %q: want postgres://... or sqlite:PATH", Redact(rawURL))
}

// SQLitePath returns the file path of a sqlite: URL (sqlite:PATH or sqlite://PATH).
func SQLitePath(rawURL string) string { return sqlitestore.PathOf(rawURL) }

// Open opens the ledger store named by rawURL.
func Open(ctx context.Context, rawURL string, opts Options) (ledger.Store, error) {
	o, err := opener(rawURL)
	if err != nil {
		return nil, err
	}
	s, err := o.Open(ctx, rawURL, engine.OpenOptions{MaxConns: opts.MaxConns, SearchPath: opts.SearchPath})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", Redact(rawURL), err)
	}
	return s, nil
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
