package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/report"
)

// An import's dry run reads the file as the import would, refuses what it
// would refuse, looks its keys up in the books, and prints what it found
// (report.FileCheck): counts, totals per currency, the largest amounts. It
// writes nothing, not even to the quarantine.

// checkBatch is how many keys a dry run looks up at once.
const checkBatch = 1000

// dryRunIntents checks an intents file against the books.
func (a *app) dryRunIntents(ctx context.Context, file string) error {
	d, err := a.resolve(ctx, storeExisting)
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	kinds := intentcsv.Kinds{}
	for name, p := range d.providers {
		kinds[name] = p.IntentKind
	}
	c := report.NewFileCheck(file, "intent")
	c.Checked = true
	var batch []ledger.NewIntent
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		keys := make([]string, len(batch))
		for i, n := range batch {
			keys[i] = n.Key
		}
		stored, err := d.store.GetIntents(ctx, keys)
		if err != nil {
			return err
		}
		byKey := make(map[string]ledger.Intent, len(stored))
		for _, in := range stored {
			byKey[in.Key] = in
		}
		for _, n := range batch {
			in, ok := byKey[n.Key]
			switch {
			case !ok:
				c.New++
			case in.IntentParams.Same(n.IntentParams):
				c.Known++
			default:
				c.Differ++
			}
		}
		batch = batch[:0]
		return nil
	}
	refuse := func(perr *ledger.ParseError, _ []byte) error {
		c.Refuse(perr)
		return nil
	}
	err = intentcsv.Read(f, file, kinds, func(r intentcsv.Row) error {
		n, err := r.Intent.Normalize()
		if err == nil {
			err = checkProvider(d.providers, n.Provider)
		}
		if err != nil {
			var fe *ledger.FieldError
			field := ""
			if errors.As(err, &fe) {
				field, err = fe.Field, fe.Err
			}
			c.Refuse(&ledger.ParseError{File: file, Line: r.Line, Field: field, Err: err})
			return nil
		}
		c.Add(n.Key, fmt.Sprintf("line %d", r.Line), n.Amount, string(n.Kind), string(n.State))
		batch = append(batch, n)
		if len(batch) == checkBatch {
			return flush()
		}
		return nil
	}, refuse)
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	return report.WriteFileCheck(a.stdout, c)
}

// dryRunStatement checks a statement file of provider against the books.
func (a *app) dryRunStatement(ctx context.Context, provider string, setup config.Provider, file string) error {
	d, err := a.resolve(ctx, storeExisting)
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	c := report.NewFileCheck(file, "transaction")
	c.Checked = true
	var batch []ledger.ProviderTxn
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ids := make([]string, len(batch))
		for i, t := range batch {
			ids[i] = t.ID
		}
		stored, err := d.store.GetProviderTxns(ctx, provider, ids)
		if err != nil {
			return err
		}
		byID := make(map[string]ledger.ProviderTxn, len(stored))
		for _, t := range stored {
			byID[t.ID] = t
		}
		for _, t := range batch {
			s, ok := byID[t.ID]
			switch {
			case !ok:
				c.New++
			case s.Amount.Equal(t.Amount) && s.Type == t.Type:
				c.Known++
			default:
				c.Differ++
			}
		}
		batch = batch[:0]
		return nil
	}
	err = setup.Statement.ParseStatement(f, file, func(s providers.Sighting) error {
		t := s.Txn
		t.Provider = provider
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
		batch = append(batch, t)
		if len(batch) == checkBatch {
			return flush()
		}
		return nil
	}, func(perr *ledger.ParseError, _ []byte) error {
		c.Refuse(perr)
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	return report.WriteFileCheck(a.stdout, c)
}
