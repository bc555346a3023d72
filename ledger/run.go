package ledger

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// RunState is the state of a reconcile run.
type RunState string

// Run states.
const (
	RunRunning  RunState = "running"
	RunFinished RunState = "finished"
	RunFailed   RunState = "failed"
)

// RunKey is the stable key of a reconcile of provider over [from, to): the
// provider's default account.
func RunKey(provider string, from, to time.Time) string {
	return AccountRunKey(provider, "", from, to)
}

// AccountRunKey is the stable key of a reconcile of one account of provider
// over [from, to). The default account's key names the provider alone, as
// keys did before providers had accounts.
func AccountRunKey(provider, account string, from, to time.Time) string {
	return fmt.Sprintf("%s|%s|%s", Scope(provider, account), from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
}

// Scope names one account of a provider: the provider alone for its
// default account, provider@account for another (mpesa@600639). Run keys,
// logs and the maps of what each account is given (its puller) use it.
func Scope(provider, account string) string {
	if account == "" {
		return provider
	}
	return provider + "@" + account
}

// Run is one reconcile of a provider account and window.
type Run struct {
	ID       int64
	Key      string
	Provider string
	// Account is the provider account reconciled; empty is the default.
	Account  string
	From, To time.Time
	State    RunState
	Owner    string
	// Attempt counts the claims of this key: a re-run of a window increases it.
	Attempt        int
	LeaseExpiresAt time.Time
	StartedAt      time.Time
	FinishedAt     time.Time
	Counts         RunCounts
	// Error holds why the run failed or what its pull could not fetch.
	Error string
}

// RunCounts are the totals a run records.
type RunCounts struct {
	Intents      int `json:"intents"`
	Transactions int `json:"transactions"`
	Matched      int `json:"matched"`
	Findings     int `json:"findings"`
	New          int `json:"new"`
	Resolved     int `json:"resolved"`
	Settled      int `json:"settled"`
	DurationMS   int `json:"duration_ms"`
}

// RunClaim asks for the right to reconcile a window.
type RunClaim struct {
	Provider string
	Account  string
	From, To time.Time
	Owner    string
	Lease    time.Duration
	Now      time.Time
}

// RunRenew extends the lease of a claimed run to Now + Lease.
type RunRenew struct {
	ID    int64
	Owner string
	Lease time.Duration
	Now   time.Time
}

// RunFinish records the outcome of a claimed run.
type RunFinish struct {
	ID     int64
	Owner  string
	State  RunState
	Counts RunCounts
	Error  string
	Now    time.Time
}

// DefaultAccount is how people name a provider's default account (the
// empty one) on the command line, in files and in the APIs.
const DefaultAccount = "default"

// ParseAccount reads an account as a person names it: "" or "default" for
// the provider's default account, else one of accounts (the provider's
// others). Any other name is refused, naming those there are.
func ParseAccount(name string, accounts []string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || strings.EqualFold(name, DefaultAccount) {
		return "", nil
	}
	if slices.Contains(accounts, name) {
		return name, nil
	}
	return "", fmt.Errorf("%s is not an account of the provider (accounts: %s)", Clip(name),
		strings.Join(append([]string{DefaultAccount}, accounts...), ", "))
}
