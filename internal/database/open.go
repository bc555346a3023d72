package database

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
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

// Missing reports whether rawURL names a SQLite file that does not exist:
// opening it would create an empty one. An in-memory database or a file:
// URI is never missing.
func Missing(rawURL string) bool {
	if e, err := Engine(rawURL); err != nil || e != ledger.EngineSQLite {
		return false
	}
	path := SQLitePath(rawURL)
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return false
	}
	_, err := os.Stat(path)
	return errors.Is(err, fs.ErrNotExist)
}

// Same reports whether two database URLs name the same database, as far
// as their text tells: the same text, or SQLite files at the same absolute
// path.
func Same(a, b string) bool {
	if a == b {
		return true
	}
	ea, errA := Engine(a)
	eb, errB := Engine(b)
	if errA != nil || errB != nil || ea != eb || ea != ledger.EngineSQLite {
		return false
	}
	pa, errA := filepath.Abs(SQLitePath(a))
	pb, errB := filepath.Abs(SQLitePath(b))
	return errA == nil && errB == nil && pa == pb
}

// OpenMigrated opens the books rawURL names, ready for work: an engine
// that migrates on open (SQLite, embedded, one process) is migrated; any
// other (PostgreSQL, shared) must be migrated already, and an out-of-date
// or newer schema is refused (Check).
func OpenMigrated(ctx context.Context, rawURL string, opts Options) (ledger.Store, error) {
	s, err := Open(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	drv, err := engine.Of(s)
	if err == nil {
		if drv.MigrateOnOpen() {
			_, err = Migrate(ctx, s)
		} else {
			err = Check(ctx, s)
		}
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Forms of a password in a connection string.
var (
	// kvPassword is password=... (and sslpassword=...) in a keyword/value
	// DSN, quoted or not.
	kvPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*|sslpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s']+)`)
	// queryPassword is ?password=... or &password=... in a URL query.
	queryPassword = regexp.MustCompile(`(?i)([?&](?:ssl)?password=)[^&#\s]*`)
	// userinfoPassword is the user:password@ of a URL that does not parse.
	userinfoPassword = regexp.MustCompile(`(://[^:/?#@\s]*:)[^\s]*@`)
)

// Redact hides the password in a database URL or keyword/value connection
// string, in every form (user:password@ with or without a host, as for a
// unix socket, ?password= and ?sslpassword= in the query, password= in a
// DSN), keeping the rest readable. A URL that does not parse is scrubbed
// by pattern.
func Redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && !strings.HasPrefix(u.Scheme, "sqlite") && u.Opaque == "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		out := u.String()
		return queryPassword.ReplaceAllString(out, "${1}xxxxx")
	}
	if strings.Contains(raw, "://") {
		raw = userinfoPassword.ReplaceAllString(raw, "${1}xxxxx@")
		return queryPassword.ReplaceAllString(raw, "${1}xxxxx")
	}
	return kvPassword.ReplaceAllString(raw, "${1}xxxxx")
}

// Password returns the password a connection string holds, "" when none,
// so that callers can scrub it from any text that might echo it.
func Password(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Opaque == "" {
		if p, ok := u.User.Password(); ok {
			return p
		}
		q := u.Query()
		for k, v := range q {
			if (strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword")) && len(v) > 0 {
				return v[0]
			}
		}
		return ""
	}
	if m := kvPassword.FindStringSubmatch(raw); m != nil {
		return strings.Trim(m[2], "'")
	}
	return ""
}
