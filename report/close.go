package report

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// CloseStore is what the month-end close report reads; a ledger.Store has
// it.
type CloseStore interface {
	ListIntents(ctx context.Context, f ledger.IntentFilter, fn func(ledger.Intent) error) error
	ListProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ProviderTxn) error) error
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
	FindingHistory(ctx context.Context, id string) ([]ledger.HistoryEvent, error)
	ListRemedies(ctx context.Context, f ledger.RemedyFilter) ([]ledger.Remedy, error)
	ScanManualLinks(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ManualLink) error) error
	ListRuns(ctx context.Context, provider string, limit int) ([]ledger.Run, error)
	ListCloses(ctx context.Context) ([]ledger.PeriodClose, error)
}

// CloseParams choose a close report: the month, and the providers with
// the zone each one's month is cut in.
type CloseParams struct {
	Period    string
	Providers map[string]*time.Location
	// Provider, when set, reports that provider alone (and its closes);
	// otherwise every provider with something in the month.
	Provider string
	// Accounts are, by provider, its accounts besides the default one
	// (config.AccountsOf). Each account of a provider is a section of its
	// own: its intents, evidence, findings and runs are its own.
	Accounts map[string][]string
	// Account, when AccountSet, reports that account of Provider alone
	// ("" is the default account). A month is closed for a whole
	// provider, so such a report cannot be recorded as a close.
	Account    string
	AccountSet bool
	// Now is when the report is made: days not yet over are not counted as
	// windows missing a run.
	Now time.Time
}

// Close is the month-end close report: per provider and currency, what the
// books hold for the month (intents and evidence, counted and summed), what
// the runs matched, the findings still open by kind with the money at risk,
// and what people did (resolved by hand, written off, refunded, matched by
// hand, and who); what changed in earlier closed months since the last
// close; whether every day of the month was run; and who closed it.
type Close struct {
	Period   string `json:"period"`
	Provider string `json:"provider,omitempty"`
	// Account is the one account reported (CloseParams.AccountSet): the
	// account's short code or id, or "default".
	Account  string          `json:"account,omitempty"`
	Closed   *CloseRecord    `json:"closed,omitempty"`
	Previous *CloseRecord    `json:"previous_close,omitempty"`
	Sections []CloseProvider `json:"providers"`
}

// CloseRecord is a recorded close.
type CloseRecord struct {
	Period   string    `json:"period"`
	Provider string    `json:"provider,omitempty"`
	By       string    `json:"by"`
	Via      string    `json:"via"`
	At       time.Time `json:"at"`
	Note     string    `json:"note,omitempty"`
}

// CloseProvider is one provider account's month.
type CloseProvider struct {
	Provider string `json:"provider"`
	// Account is the provider account; empty is the default one.
	Account string    `json:"account,omitempty"`
	Zone    string    `json:"zone"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	// Days are the month's days in the provider's zone, Due those over by
	// the report's time, Run those a finished run covered, and Missing the
	// due ones no run covered (YYYY-MM-DD).
	Days    int      `json:"days"`
	Due     int      `json:"days_due"`
	Run     int      `json:"days_run"`
	Missing []string `json:"days_not_run"`
	// Transactions and Matched are the month's runs' counts: the
	// transactions of their windows, and those linked to an intent.
	Transactions int             `json:"transactions"`
	Matched      int             `json:"matched"`
	Currencies   []CloseCurrency `json:"currencies"`
	// ResolvedByHand, WrittenOff, Refunded and MatchedByHand say what
	// people did about the month's findings and payments, and who.
	ResolvedByHand []HandResolution `json:"resolved_by_hand"`
	WrittenOff     []RemedyLine     `json:"written_off"`
	Refunded       []RemedyLine     `json:"refunded"`
	MatchedByHand  []HandMatch      `json:"matched_by_hand"`
	// Late are the month's findings raised after the month was closed.
	Late []ChangeLine `json:"raised_after_close"`
	// Changed are the findings of earlier closed months raised or resolved
	// since the previous close.
	Changed []ChangeLine `json:"changed_since_previous_close"`
}

// Scope names the section's provider and account as findings do
// ("mpesa", "mpesa@600639").
func (p CloseProvider) Scope() string { return ledger.Scope(p.Provider, p.Account) }

// CloseCurrency is one currency of a provider's month.
type CloseCurrency struct {
	Currency string `json:"currency"`
	// Intents are the charges and expected payments created in the month,
	// RefundIntents the refunds.
	Intents       CountSum `json:"intents"`
	RefundIntents CountSum `json:"refund_intents"`
	// In is the successful money in (charges), Back the money given back
	// (refunds, reversals), Other the rest (fees, payouts, adjustments).
	In    CountSum `json:"evidence_in"`
	Back  CountSum `json:"evidence_back"`
	Other CountSum `json:"evidence_other"`
	// Open are the findings not resolved, by kind, and OpenAtRisk their
	// money at risk.
	Open           []KindAtRisk `json:"open"`
	OpenAtRisk     CountSum     `json:"open_at_risk"`
	ResolvedByHand int          `json:"resolved_by_hand"`
	WrittenOff     CountSum     `json:"written_off"`
	Refunded       CountSum     `json:"refunded"`
}

// CountSum is a count and a sum.
type CountSum struct {
	N      int    `json:"n"`
	Amount string `json:"amount"`
	sum    decimal.Decimal
}

func (c *CountSum) add(v decimal.Decimal) {
	c.N++
	c.sum = c.sum.Add(v.Abs())
}

// KindAtRisk is the open findings of one kind.
type KindAtRisk struct {
	Kind   ledger.Kind `json:"kind"`
	N      int         `json:"n"`
	AtRisk string      `json:"at_risk"`
	sum    decimal.Decimal
}

// HandResolution is a finding a person resolved.
type HandResolution struct {
	Finding string      `json:"finding"`
	Kind    ledger.Kind `json:"kind"`
	AtRisk  string      `json:"at_risk"`
	By      string      `json:"by"`
	Via     string      `json:"via"`
	At      time.Time   `json:"at"`
	Note    string      `json:"note"`
}

// RemedyLine is a write-off or a refund asked for on a finding.
type RemedyLine struct {
	Finding     string      `json:"finding"`
	Kind        ledger.Kind `json:"kind"`
	Amount      string      `json:"amount"`
	TxnID       string      `json:"txn_id,omitempty"`
	RefundKey   string      `json:"refund_key,omitempty"`
	Status      string      `json:"status"`
	RequestedBy string      `json:"requested_by"`
	ApprovedBy  string      `json:"approved_by,omitempty"`
	At          time.Time   `json:"at"`
	Note        string      `json:"note"`
}

// HandMatch is a transaction a person matched to an intent.
type HandMatch struct {
	TxnID     string    `json:"txn_id"`
	IntentKey string    `json:"intent_key"`
	By        string    `json:"by"`
	At        time.Time `json:"at"`
	Note      string    `json:"note"`
}

// ChangeLine is a finding of a closed month raised or resolved after the
// close.
type ChangeLine struct {
	Finding  string      `json:"finding"`
	Kind     ledger.Kind `json:"kind"`
	Period   string      `json:"period"`
	AtRisk   string      `json:"at_risk"`
	What     string      `json:"what"`
	At       time.Time   `json:"at"`
	ClosedAt time.Time   `json:"closed_at"`
}

// maxFindings bounds what one provider's month is read of.
const maxFindings = 1_000_000

// BuildClose reads the close report of p from the books.
func BuildClose(ctx context.Context, s CloseStore, p CloseParams) (Close, error) {
	out := Close{Period: p.Period, Provider: p.Provider}
	if _, err := ledger.ParsePeriod(p.Period); err != nil {
		return out, err
	}
	if p.AccountSet {
		if p.Provider == "" {
			return out, &ledger.FieldError{Field: "account", Err: errors.New("needs a provider")}
		}
		out.Account = cmp.Or(p.Account, ledger.DefaultAccount)
	}
	closes, err := s.ListCloses(ctx)
	if err != nil {
		return out, err
	}
	scope := func(c ledger.PeriodClose) bool { return c.Provider == p.Provider }
	for _, c := range closes {
		if !scope(c) {
			continue
		}
		switch {
		case c.Period == p.Period:
			r := recordOf(c)
			out.Closed = &r
		case c.Period < p.Period:
			r := recordOf(c)
			out.Previous = &r // the latest, closes are by period
		}
	}
	names := slices.Sorted(maps.Keys(p.Providers))
	if p.Provider != "" {
		names = []string{p.Provider}
	}
	for _, name := range names {
		accounts := append([]string{""}, p.Accounts[name]...)
		if p.AccountSet {
			accounts = []string{p.Account}
		}
		for _, account := range accounts {
			sec, any, err := buildProvider(ctx, s, p, name, account, closes, out.Previous)
			if err != nil {
				return out, err
			}
			// A provider asked for shows its default account (or the
			// account asked for) even when empty.
			if any || (p.Provider != "" && (account == "" || p.AccountSet)) {
				out.Sections = append(out.Sections, sec)
			}
		}
	}
	return out, nil
}

func recordOf(c ledger.PeriodClose) CloseRecord {
	return CloseRecord{Period: c.Period, Provider: c.Provider, By: c.ClosedBy, Via: string(c.ClosedVia), At: c.ClosedAt, Note: c.Note}
}

// buildProvider reads one provider account's month; any says whether it
// holds anything.
func buildProvider(ctx context.Context, s CloseStore, p CloseParams, name, account string, closes []ledger.PeriodClose, prev *CloseRecord) (CloseProvider, bool, error) {
	zone := p.Providers[name]
	if zone == nil {
		zone = time.UTC
	}
	from, to, err := ledger.PeriodBounds(p.Period, zone)
	if err != nil {
		return CloseProvider{}, false, err
	}
	sec := CloseProvider{Provider: name, Account: account, Zone: zone.String(), From: from, To: to}
	cur := map[string]*CloseCurrency{}
	of := func(c string) *CloseCurrency {
		if cur[c] == nil {
			cur[c] = &CloseCurrency{Currency: c}
		}
		return cur[c]
	}
	any, err := sumIntents(ctx, s, ledger.IntentFilter{Provider: name, Account: account, From: from, To: to}, of)
	if err != nil {
		return sec, false, err
	}
	anyTxn, err := sumEvidence(ctx, s, ledger.TxnFilter{Provider: name, Account: account, From: from, To: to}, of)
	if err != nil {
		return sec, false, err
	}
	any = any || anyTxn
	fs, err := s.ListFindings(ctx, ledger.FindingFilter{Provider: name, Accounts: []string{account}, From: from, To: to, Limit: maxFindings})
	if err != nil {
		return sec, false, err
	}
	if len(fs) > 0 {
		any = true
	}
	if err := sec.findings(ctx, s, fs, of); err != nil {
		return sec, false, err
	}
	if err := sec.matchedByHand(ctx, s, ledger.TxnFilter{Provider: name, Account: account, From: from, To: to}); err != nil {
		return sec, false, err
	}
	if err := sec.windows(ctx, s, p.Now, zone); err != nil {
		return sec, false, err
	}
	if sec.Run > 0 {
		any = true
	}
	sec.raisedLate(fs, closes, zone)
	if prev != nil {
		if err := sec.changedSince(ctx, s, from, zone, *prev, closes); err != nil {
			return sec, false, err
		}
	}
	for _, c := range slices.Sorted(maps.Keys(cur)) {
		sec.Currencies = append(sec.Currencies, cur[c].done())
	}
	return sec, any, nil
}

// sumIntents counts and sums the month's intents, charges and refunds
// apart, per currency; any says whether there was one.
func sumIntents(ctx context.Context, s CloseStore, filter ledger.IntentFilter, of func(string) *CloseCurrency) (any bool, err error) {
	err = s.ListIntents(ctx, filter, func(in ledger.Intent) error {
		any = true
		c := of(in.Amount.Currency)
		if in.IsRefund() {
			c.RefundIntents.add(in.Amount.Value)
		} else {
			c.Intents.add(in.Amount.Value)
		}
		return nil
	})
	return any, err
}

// sumEvidence counts and sums the month's successful provider
// transactions per currency: charges in, refunds and reversals back, the
// rest apart; any says whether there was a transaction at all.
func sumEvidence(ctx context.Context, s CloseStore, filter ledger.TxnFilter, of func(string) *CloseCurrency) (any bool, err error) {
	err = s.ListProviderTxns(ctx, filter, func(t ledger.ProviderTxn) error {
		any = true
		if t.Status != ledger.TxnSucceeded {
			return nil
		}
		c := of(t.Amount.Currency)
		switch t.Type {
		case ledger.TxnCharge:
			c.In.add(t.Amount.Value)
		case ledger.TxnRefund, ledger.TxnReversal:
			c.Back.add(t.Amount.Value)
		default:
			c.Other.add(t.Amount.Value)
		}
		return nil
	})
	return any, err
}

// matchedByHand lists the month's transactions that people matched to an
// intent by hand.
func (sec *CloseProvider) matchedByHand(ctx context.Context, s CloseStore, filter ledger.TxnFilter) error {
	return s.ScanManualLinks(ctx, filter, func(l ledger.ManualLink) error {
		sec.MatchedByHand = append(sec.MatchedByHand, HandMatch{TxnID: l.TxnID, IntentKey: l.IntentKey, By: l.Actor, At: l.At, Note: l.Note})
		return nil
	})
}

// raisedLate lists the findings first seen after the month they belong to
// was closed.
func (sec *CloseProvider) raisedLate(fs []ledger.Finding, closes []ledger.PeriodClose, zone *time.Location) {
	for _, f := range fs {
		if c, ok := ledger.ClosedBefore(f, closes, zone); ok {
			sec.Late = append(sec.Late, ChangeLine{Finding: f.ID, Kind: f.Kind, Period: c.Period, AtRisk: showAmount(f.AtRisk),
				What: "raised after the close", At: f.FirstSeenAt, ClosedAt: c.ClosedAt})
		}
	}
}

// findings sorts the month's findings: open ones by kind and currency, and
// what people did about them.
func (sec *CloseProvider) findings(ctx context.Context, s CloseStore, fs []ledger.Finding, of func(string) *CloseCurrency) error {
	ids := make([]string, 0, len(fs))
	byID := make(map[string]ledger.Finding, len(fs))
	for _, f := range fs {
		ids = append(ids, f.ID)
		byID[f.ID] = f
		if f.Status == ledger.FindingResolved {
			continue
		}
		c := of(currencyOf(f))
		c.OpenAtRisk.add(f.AtRisk.Value)
		i := slices.IndexFunc(c.Open, func(k KindAtRisk) bool { return k.Kind == f.Kind })
		if i < 0 {
			c.Open = append(c.Open, KindAtRisk{Kind: f.Kind})
			i = len(c.Open) - 1
		}
		c.Open[i].N++
		c.Open[i].sum = c.Open[i].sum.Add(f.AtRisk.Value)
	}
	var remedies []ledger.Remedy
	if len(ids) > 0 {
		var err error
		if remedies, err = s.ListRemedies(ctx, ledger.RemedyFilter{FindingIDs: ids}); err != nil {
			return err
		}
	}
	fixed := map[string]bool{} // findings resolved by a remedy
	for _, r := range remedies {
		f := byID[r.FindingID]
		line := RemedyLine{Finding: r.FindingID, Kind: f.Kind, Amount: showAmount(r.Amount), TxnID: r.TxnID, RefundKey: r.RefundKey,
			Status: string(r.Status), RequestedBy: r.RequestedBy, ApprovedBy: r.DecidedBy, At: r.AppliedAt, Note: r.Note}
		switch {
		case !r.Status.Live() || r.Status == ledger.RemedyAwaitingApproval:
		case r.Kind == ledger.RemedyWriteOff:
			sec.WrittenOff = append(sec.WrittenOff, line)
			of(r.Amount.Currency).WrittenOff.add(r.Amount.Value)
			fixed[r.FindingID] = true
		case r.Kind == ledger.RemedyRefund:
			sec.Refunded = append(sec.Refunded, line)
			of(r.Amount.Currency).Refunded.add(r.Amount.Value)
		case r.Kind == ledger.RemedyCancel:
			fixed[r.FindingID] = true
		}
	}
	for _, f := range fs {
		if f.Status != ledger.FindingResolved || f.ResolvedBy != ledger.ResolvedByPerson || fixed[f.ID] {
			continue
		}
		hist, err := s.FindingHistory(ctx, f.ID)
		if err != nil {
			return err
		}
		h := HandResolution{Finding: f.ID, Kind: f.Kind, AtRisk: showAmount(f.AtRisk), By: f.Resolver, At: f.ResolvedAt, Note: f.Note}
		matched := false
		for i := len(hist) - 1; i >= 0; i-- {
			if ev := hist[i]; ev.Action == ledger.ActionResolved {
				h.By, h.Via, h.At, h.Note = ev.Actor, string(ev.Surface), ev.At, ev.Note
				matched = i > 0 && hist[i-1].Action == ledger.ActionMatched && hist[i-1].At.Equal(ev.At)
				break
			}
		}
		if matched {
			continue // counted with the matches made by hand
		}
		sec.ResolvedByHand = append(sec.ResolvedByHand, h)
		of(currencyOf(f)).ResolvedByHand++
	}
	return nil
}

// currencyOf is the currency a finding is counted in.
func currencyOf(f ledger.Finding) string {
	for _, a := range []money.Amount{f.AtRisk, f.Expected, f.Actual} {
		if !a.IsZero() {
			return a.Currency
		}
	}
	return ""
}

// windows checks that every day of the month that is over was covered by
// a finished run, and sums the month's runs' counts.
func (sec *CloseProvider) windows(ctx context.Context, s CloseStore, now time.Time, zone *time.Location) error {
	runs, err := s.ListRuns(ctx, sec.Provider, maxFindings)
	if err != nil {
		return err
	}
	var done []ledger.Run
	for _, r := range runs {
		if r.Account != sec.Account || r.State != ledger.RunFinished || !r.To.After(sec.From) || !r.From.Before(sec.To) {
			continue
		}
		done = append(done, r)
		if !r.From.Before(sec.From) && !r.To.After(sec.To) {
			sec.Transactions += r.Counts.Transactions
			sec.Matched += r.Counts.Matched
		}
	}
	for day := sec.From.In(zone); day.Before(sec.To); day = day.AddDate(0, 0, 1) {
		end := day.AddDate(0, 0, 1)
		sec.Days++
		if end.After(now) {
			continue
		}
		sec.Due++
		if slices.ContainsFunc(done, func(r ledger.Run) bool { return !r.From.After(day) && !r.To.Before(end) }) {
			sec.Run++
		} else {
			sec.Missing = append(sec.Missing, day.Format("2006-01-02"))
		}
	}
	return nil
}

// changedSince lists the findings of months before this one that were
// raised, or resolved, after the previous close.
func (sec *CloseProvider) changedSince(ctx context.Context, s CloseStore, from time.Time, zone *time.Location, prev CloseRecord, closes []ledger.PeriodClose) error {
	name := sec.Provider
	fs, err := s.ListFindings(ctx, ledger.FindingFilter{Provider: name, Accounts: []string{sec.Account}, To: from, Limit: maxFindings})
	if err != nil {
		return err
	}
	for _, f := range fs {
		period := ledger.PeriodOf(f.OccurredAt, zone)
		closed := slices.ContainsFunc(closes, func(c ledger.PeriodClose) bool {
			return c.Period == period && (c.Provider == "" || c.Provider == name)
		})
		if !closed {
			continue
		}
		line := ChangeLine{Finding: f.ID, Kind: f.Kind, Period: period, AtRisk: showAmount(f.AtRisk), ClosedAt: prev.At}
		switch {
		case f.FirstSeenAt.After(prev.At):
			line.What, line.At = "raised", f.FirstSeenAt
		case f.Status == ledger.FindingResolved && f.ResolvedAt.After(prev.At):
			line.What, line.At = "resolved by "+orRun(f.Resolver), f.ResolvedAt
		default:
			continue
		}
		sec.Changed = append(sec.Changed, line)
	}
	slices.SortFunc(sec.Changed, func(a, b ChangeLine) int {
		return strings.Compare(a.Period+a.Finding, b.Period+b.Finding)
	})
	return nil
}

func orRun(who string) string {
	if who == "" {
		return "a run"
	}
	return who
}

// done fills the sums' text, the kinds in report order.
func (c *CloseCurrency) done() CloseCurrency {
	text := func(cs *CountSum) {
		cs.Amount = money.Amount{Value: cs.sum, Currency: c.Currency}.Text()
	}
	for _, cs := range []*CountSum{&c.Intents, &c.RefundIntents, &c.In, &c.Back, &c.Other, &c.OpenAtRisk, &c.WrittenOff, &c.Refunded} {
		text(cs)
	}
	for i := range c.Open {
		c.Open[i].AtRisk = money.Amount{Value: c.Open[i].sum, Currency: c.Currency}.Text()
	}
	slices.SortFunc(c.Open, func(a, b KindAtRisk) int {
		return slices.Index(ledger.Kinds, a.Kind) - slices.Index(ledger.Kinds, b.Kind)
	})
	return *c
}

// NotReady says why c's month should not be closed yet: a day not over, or
// over and not run; "" when every day of every provider was run.
func NotReady(c Close) string {
	var why []string
	for _, p := range c.Sections {
		switch {
		case len(p.Missing) > 0:
			why = append(why, fmt.Sprintf("%s: %d day(s) not run (%s)", p.Scope(), len(p.Missing), strings.Join(p.Missing, ", ")))
		case p.Due < p.Days:
			why = append(why, fmt.Sprintf("%s: %d day(s) not over yet", p.Scope(), p.Days-p.Due))
		}
	}
	return strings.Join(why, "; ")
}

// CloseBy is who closes a month, why, and when.
type CloseBy struct {
	Actor ledger.Actor
	Note  string
	// Force closes a month a day of which is not over or was not run.
	Force bool
	Now   time.Time
}

// NotReadyError refuses to close a month a day of which is not over or was
// not run (NotReady says which).
type NotReadyError struct {
	Period string
	Why    string
}

func (e *NotReadyError) Error() string { return e.Period + ": " + e.Why }

// ErrClosed refuses to close a month twice.
var ErrClosed = errors.New("the month is closed already")

// CloseRecorder records closes; a ledger.Store has it.
type CloseRecorder interface {
	ClosePeriod(ctx context.Context, c ledger.PeriodClose) (ledger.PeriodClose, error)
}

// RecordClose records that c's month is closed, by by, with the report as
// it stands, and returns the report with its close. A month closed
// already is refused (ErrClosed), and one a day of which is not over or was
// not run too (*NotReadyError) unless by.Force; a note is required.
func RecordClose(ctx context.Context, s CloseRecorder, c Close, by CloseBy) (Close, error) {
	if err := by.Actor.Validate(); err != nil {
		return c, err
	}
	note := strings.TrimSpace(by.Note)
	if note == "" {
		return c, &ledger.FieldError{Field: "note", Err: errors.New("is required: say what was checked")}
	}
	if c.Account != "" {
		return c, &ledger.FieldError{Field: "account", Err: errors.New("a month is closed for a whole provider, every account of it: report it without the account to close it")}
	}
	if c.Closed != nil {
		return c, fmt.Errorf("%s: %w, by %s on %s", c.Period, ErrClosed, c.Closed.By, c.Closed.At.UTC().Format(time.RFC3339))
	}
	if why := NotReady(c); why != "" && !by.Force {
		return c, &NotReadyError{Period: c.Period, Why: why}
	}
	summary, err := json.Marshal(c)
	if err != nil {
		return c, err
	}
	stored, err := s.ClosePeriod(ctx, ledger.PeriodClose{Period: c.Period, Provider: c.Provider, ClosedBy: by.Actor.Name,
		ClosedVia: by.Actor.Surface, ClosedAt: by.Now.UTC(), Note: note, Summary: string(summary)})
	if errors.Is(err, ledger.ErrConflict) {
		return c, fmt.Errorf("%s: %w (closed meanwhile)", c.Period, ErrClosed)
	}
	if err != nil {
		return c, err
	}
	r := recordOf(stored)
	c.Closed = &r
	return c, nil
}
