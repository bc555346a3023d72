package ledger

import (
	"context"
	"time"
)

// Engine names a database engine.
type Engine string

// Engines.
const (
	EnginePostgres Engine = "postgres"
	EngineSQLite   Engine = "sqlite"
)

// IntentStore keeps intents.
type IntentStore interface {
	// CreateIntent creates an intent, or returns the existing one when the key
	// exists with the same parameters (created false). The same key with other
	// parameters fails with *KeyReuseError.
	CreateIntent(ctx context.Context, n NewIntent) (Intent, bool, error)
	GetIntent(ctx context.Context, key string) (Intent, error)
	// GetIntents returns, as GetIntent would, each intent that exists among
	// keys, once, in no particular order; missing keys are left out.
	GetIntents(ctx context.Context, keys []string) ([]Intent, error)
	// ClaimIntent takes the lease on a pending intent, or on a processing one
	// whose lease expired, in one atomic statement. Anything else fails with
	// ErrNotClaimable.
	ClaimIntent(ctx context.Context, p ClaimParams) (Intent, error)
	// TransitionIntent moves an intent compare-and-set; a lost race fails with
	// ErrConflict.
	TransitionIntent(ctx context.Context, p TransitionParams) (Intent, error)
	// ClaimAndStart is ClaimIntent that, when the claim is the intent's
	// first, also records its first attempt, atomically; the attempt is
	// zero otherwise.
	ClaimAndStart(ctx context.Context, p ClaimParams) (Intent, Attempt, error)
	// FinishAttempt records an attempt's outcome, moves its intent
	// compare-and-set (ErrConflict when the race is lost) and stores the
	// event announcing it, atomically; created says the event is new. Use it
	// inside a transaction to commit more with it.
	FinishAttempt(ctx context.Context, f FinishParams) (in Intent, created bool, err error)
	// ImportIntents creates many intents at once, as CreateIntent would each
	// in order, and records the provider references of each new one as
	// imported attempts. A row whose key exists with other parameters, or
	// that is invalid, is refused and the others still written: the caller
	// rolls the transaction back to import nothing. Memory stays bounded
	// however many rows there are. Use it inside a transaction.
	ImportIntents(ctx context.Context, p ImportIntentsParams) (ImportIntentsResult, error)
	// ListIntents streams the intents of a provider created in the filter's
	// window, in creation order, with their provider references.
	ListIntents(ctx context.Context, f IntentFilter, fn func(Intent) error) error
	// ListIntentsInState streams intents of a provider in the given states
	// regardless of age, oldest first.
	ListIntentsInState(ctx context.Context, provider string, states []State, fn func(Intent) error) error
}

// AttemptStore keeps attempts.
type AttemptStore interface {
	// StartAttempt records an attempt started at p.Now, or at the intent's
	// creation if that is later: an attempt never starts before its intent
	// (the scans rely on it).
	StartAttempt(ctx context.Context, p AttemptParams) (Attempt, error)
	UpdateAttempt(ctx context.Context, u AttemptUpdate) (Attempt, error)
	ListAttempts(ctx context.Context, intentKey string) ([]Attempt, error)
	// FindAttempt finds the attempt that recorded providerRef for an intent
	// of provider.
	FindAttempt(ctx context.Context, provider, providerRef string) (Attempt, error)
}

// TxnStore keeps provider transactions and their sources.
type TxnStore interface {
	// UpsertProviderTxn records a sighting of a provider transaction: it is
	// UpsertProviderTxns with a batch of one, and the stored transaction
	// read back.
	UpsertProviderTxn(ctx context.Context, t ProviderTxn, src Source) (UpsertResult, error)
	// UpsertProviderTxns records a batch of sightings in a few set-based
	// statements, with the effect of recording them one after the other in
	// batch order, atomically. A new (provider, id) is inserted from its
	// first sighting. A sighting that contradicts the stored transaction
	// (Conflict), whether or not its channel and ref are known, is
	// quarantined (once) and changes nothing: the first kept wins. Any other
	// sighting gains its source when the channel and ref are new and fills
	// the transaction's empty fields (and a pending status), never
	// overwriting. An invalid sighting fails the batch with a
	// *SightingError and nothing stored. Use it inside a transaction to
	// import many batches whole.
	UpsertProviderTxns(ctx context.Context, batch []Sighting) (UpsertCounts, error)
	GetProviderTxn(ctx context.Context, provider, id string) (ProviderTxn, error)
	// GetProviderTxns returns, as GetProviderTxn would (sources included),
	// each transaction of provider that exists among ids, once, in no
	// particular order; missing ids are left out.
	GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ProviderTxn, error)
	// ListProviderTxns streams the transactions of a provider that occurred
	// in the filter's window, in occurrence order, without sources.
	ListProviderTxns(ctx context.Context, f TxnFilter, fn func(ProviderTxn) error) error
}

// RunStore keeps reconcile runs.
type RunStore interface {
	// ClaimRun claims the window for owner: it creates the run, or takes over
	// a finished, failed or lease-expired one. A window being run by someone
	// else fails with ErrNotClaimable.
	ClaimRun(ctx context.Context, c RunClaim) (Run, error)
	// FinishRun records the outcome of a run still owned by f.Owner;
	// otherwise ErrConflict.
	FinishRun(ctx context.Context, f RunFinish) (Run, error)
	// RenewRun extends the lease of a run still held by r.Owner, so that a
	// long run is not taken over while it works; otherwise ErrConflict.
	RenewRun(ctx context.Context, r RunRenew) (Run, error)
	GetRun(ctx context.Context, id int64) (Run, error)
	// GetRunByKey returns the run of a window by its RunKey.
	GetRunByKey(ctx context.Context, key string) (Run, error)
	ListRuns(ctx context.Context, provider string, limit int) ([]Run, error)
}

// FindingStore keeps findings.
type FindingStore interface {
	// UpsertFinding records that run runID saw f: a new id is inserted open;
	// a known one gets last seen updated, its amounts and severity refreshed,
	// and reopens if it was resolved.
	UpsertFinding(ctx context.Context, f Finding, runID int64, now time.Time) (FindingChange, error)
	// UpsertFindings records that run runID saw each of fs, with the effect
	// and the changes of UpsertFinding called for each in order, in as few
	// round trips as the engine allows. The changes come back in the order
	// of fs.
	UpsertFindings(ctx context.Context, fs []Finding, runID int64, now time.Time) ([]FindingChange, error)
	// ResolveUnseen resolves the open and acknowledged findings of a provider
	// whose evidence lies in the window and that were last seen before
	// SeenSince (the start of the run that no longer sees them).
	ResolveUnseen(ctx context.Context, p ResolveUnseenParams) ([]Finding, error)
	// ListUnseen returns the open and acknowledged findings of a provider
	// last seen before SeenSince that lie in the window, belong to one of
	// the intents or are among the ids: those a run may resolve once it has
	// judged them.
	ListUnseen(ctx context.Context, f UnseenFilter) ([]Finding, error)
	// ResolveFindings resolves each of p's findings that is still open or
	// acknowledged and was last seen before SeenSince, with its own note,
	// and writes each resolution's auto_resolved event; it returns those it
	// resolved.
	ResolveFindings(ctx context.Context, p ResolveFindingsParams) ([]Finding, error)
	// SuggestFor gives each finding of sugs (by id) its suggestion when it
	// is not resolved and has none: a run that finds the other half of a
	// finding of another window tells it. It returns how many it set.
	SuggestFor(ctx context.Context, sugs map[string]Suggestion) (int, error)
	GetFinding(ctx context.Context, id string) (Finding, error)
	// ListFindings lists findings newest first (by occurred_at, then id).
	ListFindings(ctx context.Context, f FindingFilter) ([]Finding, error)
	// UpdateFinding acknowledges or resolves a finding by hand.
	UpdateFinding(ctx context.Context, u FindingUpdate) (Finding, error)
	// CountFindings counts findings by provider, kind and status.
	CountFindings(ctx context.Context) ([]FindingCount, error)
}

// QuarantineStore keeps rejected input.
type QuarantineStore interface {
	AddQuarantine(ctx context.Context, q QuarantineItem) (int64, error)
	// AddQuarantineOnce is AddQuarantine unless the quarantine already
	// holds an item of the same source, origin, field and raw input (as
	// Bounded keeps them), whatever its status: a pull that meets the same
	// bad object again adds nothing. added is false then, and id is the
	// earlier item's.
	AddQuarantineOnce(ctx context.Context, q QuarantineItem) (id int64, added bool, err error)
	ListQuarantine(ctx context.Context, source string, limit int) ([]QuarantineItem, error)
}

// Executor is every operation on the books. Store and Tx implement it.
type Executor interface {
	IntentStore
	AttemptStore
	TxnStore
	RunStore
	FindingStore
	QuarantineStore
	CallbackStore
	AlertStore
	EventStore
	ScanStore
	HistoryStore
	ManualLinkStore
	InteractionStore
	LookupStore
	PullRegistrationStore
	RemedyStore
	RefundWaitStore
	IntentChangeStore
	CloseStore
	PayoutStore
}

// Tx is an Executor inside one database transaction.
type Tx interface {
	Executor
	// Engine says which engine the transaction belongs to, for adapters
	// that unwrap it (the queue).
	Engine() Engine
}

// Transactor runs work in transactions: a Store is one, and code that
// writes only through transactions of its own asks for no more.
type Transactor interface {
	// InTx runs fn in one transaction, committed when fn returns nil and
	// rolled back otherwise.
	InTx(ctx context.Context, fn func(Tx) error) error
}

// Store is the books on one database. Its consumers ask for the few
// methods they use, in interfaces of their own that a Store satisfies.
type Store interface {
	Executor
	Transactor
	Engine() Engine
	Ping(ctx context.Context) error
	Close()
}
