package report

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
	"github.com/reconcilehq/reconcile/providers"
)

// An import's dry run reads the file as the import would, refuses what it
// would refuse, looks its keys up in the books, and tells what it found
// (FileCheck): counts, totals per currency, the largest amounts. It writes
// nothing, not even to the quarantine.

// checkBatch is how many keys a dry run looks up at once.
const checkBatch = 1000

// keyChecker counts a file's good rows as new, known or different, looking
// their keys up in the books a batch at a time.
type keyChecker[T any] struct {
	c     *FileCheck
	batch []T
	key   func(T) string
	// stored reads the stored rows of keys, by key.
	stored func(ctx context.Context, keys []string) (map[string]T, error)
	same   func(stored, row T) bool
}

// add takes a good row and looks up the batch when it is full.
func (k *keyChecker[T]) add(ctx context.Context, row T) error {
	k.batch = append(k.batch, row)
	if len(k.batch) == checkBatch {
		return k.flush(ctx)
	}
	return nil
}

// flush looks up the batch's keys and counts its rows.
func (k *keyChecker[T]) flush(ctx context.Context) error {
	if len(k.batch) == 0 {
		return nil
	}
	keys := make([]string, len(k.batch))
	for i, row := range k.batch {
		keys[i] = k.key(row)
	}
	stored, err := k.stored(ctx, keys)
	if err != nil {
		return err
	}
	for _, row := range k.batch {
		s, ok := stored[k.key(row)]
		switch {
		case !ok:
			k.c.New++
		case k.same(s, row):
			k.c.Known++
		default:
			k.c.Differ++
		}
	}
	k.batch = k.batch[:0]
	return nil
}

// refusal is a row's error as the import reports it: a field error names
// its field.
func refusal(file string, line int, err error) *ledger.ParseError {
	var fe *ledger.FieldError
	field := ""
	if errors.As(err, &fe) {
		field, err = fe.Field, fe.Err
	}
	return &ledger.ParseError{File: file, Line: line, Field: field, Err: err}
}

// CheckIntents reads an intents file as `import intents` would, with kinds
// the providers' default kinds and accept refusing a provider that is not
// configured, and checks its rows against the books.
func CheckIntents(ctx context.Context, books ledger.Reader, r io.Reader, file string, kinds intentcsv.Kinds,
	accept func(provider string) error) (*FileCheck, error) {
	c := NewFileCheck(file, "intent")
	c.Checked = true
	k := &keyChecker[ledger.NewIntent]{c: c, key: func(n ledger.NewIntent) string { return n.Key },
		same: func(s, n ledger.NewIntent) bool { return s.IntentParams.Same(n.IntentParams) },
		stored: func(ctx context.Context, keys []string) (map[string]ledger.NewIntent, error) {
			stored, err := books.GetIntents(ctx, keys)
			out := make(map[string]ledger.NewIntent, len(stored))
			for _, in := range stored {
				out[in.Key] = ledger.NewIntent{IntentParams: in.IntentParams}
			}
			return out, err
		}}
	err := intentcsv.Read(r, file, kinds, func(row intentcsv.Row) error {
		n, err := row.Intent.Normalize()
		if err == nil {
			err = accept(n.Provider)
		}
		if err != nil {
			c.Refuse(refusal(file, row.Line, err))
			return nil
		}
		c.Add(n.Key, fmt.Sprintf("line %d", row.Line), n.Amount, string(n.Kind), string(n.State))
		return k.add(ctx, n)
	}, func(perr *ledger.ParseError, _ []byte) error {
		c.Refuse(perr)
		return nil
	})
	if err == nil {
		err = k.flush(ctx)
	}
	return c, err
}

// CheckStatement reads a statement file of an account of provider with
// parser, as `import statement` would, and checks its transactions against
// the books: one stored with another amount or type, or in another
// account, is present otherwise.
func CheckStatement(ctx context.Context, books ledger.Reader, r io.Reader, file, provider, account string,
	parser providers.StatementParser) (*FileCheck, error) {
	c := NewFileCheck(file, "transaction")
	c.Checked = true
	k := &keyChecker[ledger.ProviderTxn]{c: c, key: func(t ledger.ProviderTxn) string { return t.ID },
		same: func(s, t ledger.ProviderTxn) bool {
			return s.Amount.Equal(t.Amount) && s.Type == t.Type && s.Account == t.Account
		},
		stored: func(ctx context.Context, ids []string) (map[string]ledger.ProviderTxn, error) {
			stored, err := books.GetProviderTxns(ctx, provider, ids)
			out := make(map[string]ledger.ProviderTxn, len(stored))
			for _, t := range stored {
				out[t.ID] = t
			}
			return out, err
		}}
	err := parser.ParseStatement(r, file, func(s providers.Sighting) error {
		t := s.Txn
		t.Provider, t.Account = provider, account
		if err := ledger.ValidateTxn(t); err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				return err
			}
			c.Refuse(&ledger.ParseError{File: file, Field: fe.Field, Err: fmt.Errorf("transaction %s: %w", t.ID, fe.Err)})
			return nil
		}
		where := s.Source.Ref
		if where == "" {
			where = t.ID
		}
		c.Add(t.ID, where, t.Amount, string(t.Type), string(t.Status))
		return k.add(ctx, t)
	}, func(perr *ledger.ParseError, _ []byte) error {
		c.Refuse(perr)
		return nil
	})
	if err == nil {
		err = k.flush(ctx)
	}
	return c, err
}
