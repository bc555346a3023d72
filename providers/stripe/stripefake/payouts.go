package stripefake

import (
	"fmt"
	"net/url"
	"sort"
	"time"
)

// Payout is a stored payout to the account's bank account.
type Payout struct {
	ID       string
	Amount   int64
	Currency string
	Created  time.Time
	// ArrivalDate is when Stripe expects the money at the bank.
	ArrivalDate time.Time
	// Status is Stripe's: paid, pending, in_transit, failed, canceled.
	Status      string
	TraceID     string
	Descriptor  string
	Destination string
	// BalanceTxns are what it paid out, and BalanceTxn its own.
	BalanceTxns []string
	BalanceTxn  string
	order       int
}

// PayoutSpec describes a payout to add.
type PayoutSpec struct {
	ID       string
	Currency string
	Created  time.Time
	// ArrivalDate defaults to Created.
	ArrivalDate time.Time
	// Status defaults to paid.
	Status      string
	TraceID     string
	Descriptor  string
	Destination string
	// BalanceTxns are the balance transactions it pays out.
	BalanceTxns []string
	// Amount, when not zero, is the payout's amount whatever its balance
	// transactions add up to (a payout that does not add up); by default
	// their net.
	Amount int64
}

// AddPayout pays the balance transactions of spec out in an automatic
// payout: each is marked as paid out in it, and the payout gets a balance
// transaction of its own taking its amount out of the balance.
func (s *Server) AddPayout(spec PayoutSpec) (Payout, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if spec.ID == "" {
		spec.ID = s.id("po")
	}
	if spec.Created.IsZero() {
		spec.Created = s.clock()
	}
	if spec.ArrivalDate.IsZero() {
		spec.ArrivalDate = spec.Created
	}
	if spec.Status == "" {
		spec.Status = "paid"
	}
	var net int64
	for _, id := range spec.BalanceTxns {
		b, ok := s.btxns[id]
		if !ok {
			return Payout{}, fmt.Errorf("no balance transaction %s", id)
		}
		if spec.Currency == "" {
			spec.Currency = b.Currency
		}
		net += b.Amount - b.Fee
		b.Payout = spec.ID
	}
	amount := spec.Amount
	if amount == 0 {
		amount = net
	}
	own := &BalanceTxn{ID: s.id("txn"), Amount: -amount, Currency: spec.Currency, Created: spec.Created, Type: "payout",
		Source: spec.ID, Category: "payout", Status: "available", Payout: spec.ID, order: s.next()}
	s.btxns[own.ID] = own
	p := &Payout{ID: spec.ID, Amount: amount, Currency: spec.Currency, Created: spec.Created, ArrivalDate: spec.ArrivalDate,
		Status: spec.Status, TraceID: spec.TraceID, Descriptor: spec.Descriptor, Destination: spec.Destination,
		BalanceTxns: append([]string(nil), spec.BalanceTxns...), BalanceTxn: own.ID, order: s.next()}
	s.payouts[p.ID] = p
	return *p, nil
}

// Payouts returns the stored payouts, oldest first.
func (s *Server) Payouts() []Payout {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Payout, 0, len(s.payouts))
	for _, p := range s.payouts {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

func (s *Server) listPayouts(v url.Values) (any, *apiError) {
	arrival, aerr := rangeFilter(v, "arrival_date")
	if aerr != nil {
		return nil, aerr
	}
	items := make([]listed, 0, len(s.payouts))
	for _, p := range s.payouts {
		if !arrival(p.ArrivalDate) {
			continue
		}
		items = append(items, listed{p.ID, p.Created, p.order, func() map[string]any { return payoutJSON(p) }})
	}
	return page("/v1/payouts", v, items)
}

func payoutJSON(p *Payout) map[string]any {
	trace := map[string]any{"status": "pending", "value": nil}
	if p.TraceID != "" {
		trace = map[string]any{"status": "supported", "value": p.TraceID}
	}
	return map[string]any{"id": p.ID, "object": "payout", "amount": p.Amount, "currency": p.Currency,
		"created": p.Created.Unix(), "arrival_date": p.ArrivalDate.Unix(), "automatic": true, "status": p.Status,
		"balance_transaction": p.BalanceTxn, "destination": nullable(p.Destination), "method": "standard",
		"statement_descriptor": nullable(p.Descriptor), "trace_id": trace, "type": "bank_account"}
}

// BalanceTxnsOf returns the balance transactions whose source is one of
// ids (charges, refunds, disputes), oldest first.
func (s *Server) BalanceTxnsOf(ids ...string) []BalanceTxn {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []BalanceTxn
	for _, b := range s.btxns {
		if want[b.Source] {
			out = append(out, *b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}
