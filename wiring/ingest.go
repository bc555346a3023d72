package wiring

import (
	"os"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/ingest"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
)

// IntentsImporter is the importer of intents files into the books: a row's
// kind defaults to its provider's intent kind, its account is checked
// against the providers' accounts, and, when charge is set, every pending
// intent imported gets its charge (or refund) job through QueuedCharges.
// progress, when a terminal, shows how far a file is read.
func (p *Parts) IntentsImporter(charge bool, progress *os.File) *ingest.Intents {
	im := &ingest.Intents{Store: p.Store, Kinds: intentcsv.Kinds{}, Accounts: config.AccountsOf(p.Providers), Clock: p.Clock,
		Progress: progress, ChargerSetting: config.ChargerSetting, RefunderSetting: config.RefunderSetting}
	for name, pr := range p.Providers {
		im.Kinds[name] = pr.IntentKind
	}
	if charge {
		im.Charges = p.QueuedCharges()
	}
	return im
}

// StatementImporter is the importer of statements of provider's account
// acct ("" for the default one) into the books, read with the provider's
// statement parser (setup.Statement, which the caller checked is set).
func (p *Parts) StatementImporter(provider, acct string, setup config.Provider, progress *os.File) *ingest.Statement {
	parser := setup.Statement
	if setup.StatementOf != nil {
		parser = setup.StatementOf(acct)
	}
	return &ingest.Statement{Store: p.Store, Provider: provider, Account: acct, Parser: parser, Clock: p.Clock,
		Progress: progress}
}

// CallbacksImporter replays files of provider's captured callback bodies
// through the callback intake (Intake), read with its callback parser
// (setup.Callbacks, which the caller checked is set).
func (p *Parts) CallbacksImporter(provider string, setup config.Provider, progress *os.File) *ingest.Callbacks {
	return &ingest.Callbacks{Processor: p.Intake(), Provider: provider, Parser: setup.Callbacks, Clock: p.Clock, Progress: progress}
}

// BoundHeap bounds the heap of a command that imports a file, for the
// engine of cfg's database (ingest.BoundHeap).
func BoundHeap(cfg config.Config) { ingest.BoundHeap(Embedded(cfg)) }
