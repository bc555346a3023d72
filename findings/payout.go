package findings

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// A finding of a bank account (provider bank:<name>) is about payouts, the
// account's lines and charges of other providers: its transactions name a
// payout or a charge as provider/id (ledger.PayoutRef) and the account's
// lines by their ids. Its detail shows each payout with what it carries in
// the books, and each line of the account with its entry.

// PayoutReader is what the detail of a bank account's finding reads beyond
// a DetailReader; a ledger.Store has it.
type PayoutReader interface {
	FindPayouts(ctx context.Context, l ledger.PayoutLookup) ([]ledger.Payout, error)
	PayoutItems(ctx context.Context, provider string, payoutIDs []string) ([]ledger.PayoutItem, error)
	FindTxns(ctx context.Context, l ledger.TxnLookup) ([]ledger.ProviderTxn, error)
	GetBankEntries(ctx context.Context, provider string, ids []string) ([]ledger.BankEntry, error)
}

// maxItemsShown bounds the items of a payout a detail lists.
const maxItemsShown = 1000

// PayoutDetail is what a bank account's finding names: its payouts with
// what each carries, the charges it names, and the account's lines.
type PayoutDetail struct {
	Payouts []PayoutOf
	// Charges are transactions of other providers the finding names that
	// are no payout (a charge never paid out), as the books hold them.
	Charges []ledger.ProviderTxn
	// Lines are the account's lines the finding names, with their entries.
	Lines []BankLine
}

// PayoutOf is a payout with its transaction and items.
type PayoutOf struct {
	Payout ledger.Payout
	// Txn is the payout's transaction; nil when the books know the payout
	// from a report's rows only.
	Txn *ledger.ProviderTxn
	// Items are what it carries, by transaction id; Txn nil for an item
	// the books do not hold. More is how many were left out.
	Items []PayoutItemOf
	More  int
}

// PayoutItemOf is one transaction a payout carries.
type PayoutItemOf struct {
	TxnID string
	Txn   *ledger.ProviderTxn
}

// BankLine is a line of the account's statement.
type BankLine struct {
	Txn   ledger.ProviderTxn
	Entry *ledger.BankEntry
}

// LoadPayout reads what finding f of a bank account names.
func LoadPayout(ctx context.Context, r PayoutReader, f ledger.Finding) (*PayoutDetail, error) {
	out := &PayoutDetail{}
	byProvider := map[string][]string{}
	var lines []string
	for _, id := range f.ProviderTxnIDs {
		if p, x, ok := ledger.SplitPayoutRef(id); ok {
			byProvider[p] = append(byProvider[p], x)
		} else {
			lines = append(lines, id)
		}
	}
	for _, p := range sortedKeys(byProvider) {
		if err := loadProviderPayouts(ctx, r, p, byProvider[p], out); err != nil {
			return nil, err
		}
	}
	if len(lines) > 0 {
		ls, err := loadBankLines(ctx, r, f.Provider, lines)
		if err != nil {
			return nil, err
		}
		out.Lines = append(out.Lines, ls...)
	}
	return out, nil
}

// loadProviderPayouts adds to out the payouts of provider p among ids, by
// id, with what each carries, and the charges among ids that are not
// payouts.
func loadProviderPayouts(ctx context.Context, r PayoutReader, p string, ids []string, out *PayoutDetail) error {
	ps, err := r.FindPayouts(ctx, ledger.PayoutLookup{Provider: p, IDs: ids})
	if err != nil {
		return err
	}
	txnOf, err := txnsByID(ctx, r, p, ids)
	if err != nil {
		return err
	}
	slices.SortFunc(ps, func(a, b ledger.Payout) int { return strings.Compare(a.ID, b.ID) })
	payout := map[string]bool{}
	for _, po := range ps {
		payout[po.ID] = true
		of := PayoutOf{Payout: po}
		if t, ok := txnOf[po.ID]; ok {
			of.Txn = &t
		}
		if err := loadPayoutItems(ctx, r, p, &of); err != nil {
			return err
		}
		out.Payouts = append(out.Payouts, of)
	}
	for _, id := range ids {
		if t, ok := txnOf[id]; ok && !payout[id] && t.Type != ledger.TxnPayout {
			t.Provider = p
			out.Charges = append(out.Charges, t)
		}
	}
	return nil
}

// loadPayoutItems fills of with the first maxItemsShown transactions its
// payout carries, counting the rest in of.More.
func loadPayoutItems(ctx context.Context, r PayoutReader, p string, of *PayoutOf) error {
	items, err := r.PayoutItems(ctx, p, []string{of.Payout.ID})
	if err != nil {
		return err
	}
	if len(items) > maxItemsShown {
		of.More, items = len(items)-maxItemsShown, items[:maxItemsShown]
	}
	var iids []string
	for _, it := range items {
		iids = append(iids, it.TxnID)
	}
	itOf, err := txnsByID(ctx, r, p, iids)
	if err != nil {
		return err
	}
	for _, id := range iids {
		item := PayoutItemOf{TxnID: id}
		if t, ok := itOf[id]; ok {
			item.Txn = &t
		}
		of.Items = append(of.Items, item)
	}
	return nil
}

// txnsByID reads the transactions ids of provider p, by id.
func txnsByID(ctx context.Context, r PayoutReader, p string, ids []string) (map[string]ledger.ProviderTxn, error) {
	txns, err := r.FindTxns(ctx, ledger.TxnLookup{Provider: p, IDs: ids})
	if err != nil {
		return nil, err
	}
	byID := map[string]ledger.ProviderTxn{}
	for _, t := range txns {
		byID[t.ID] = t
	}
	return byID, nil
}

// loadBankLines reads the statement lines ids of the bank account, with
// their entries, oldest first.
func loadBankLines(ctx context.Context, r PayoutReader, account string, ids []string) ([]BankLine, error) {
	txns, err := r.FindTxns(ctx, ledger.TxnLookup{Provider: account, IDs: ids})
	if err != nil {
		return nil, err
	}
	es, err := r.GetBankEntries(ctx, account, ids)
	if err != nil {
		return nil, err
	}
	entryOf := map[string]ledger.BankEntry{}
	for _, e := range es {
		entryOf[e.TxnID] = e
	}
	slices.SortFunc(txns, func(a, b ledger.ProviderTxn) int {
		return cmp2(a.OccurredAt.Compare(b.OccurredAt), strings.Compare(a.ID, b.ID))
	})
	var lines []BankLine
	for _, t := range txns {
		l := BankLine{Txn: t}
		if e, ok := entryOf[t.ID]; ok {
			l.Entry = &e
		}
		lines = append(lines, l)
	}
	return lines, nil
}

func cmp2(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// PayoutDetailView is the JSON shape of a PayoutDetail.
type PayoutDetailView struct {
	Payouts []PayoutView   `json:"payouts"`
	Charges []TxnView      `json:"charges,omitempty"`
	Lines   []BankLineView `json:"bank_lines"`
}

// PayoutView is a payout: its transaction's amount and status when the
// books hold it, its arrival, trace and what it carries.
type PayoutView struct {
	Provider    string         `json:"provider"`
	ID          string         `json:"id"`
	Amount      *AmountView    `json:"amount,omitempty"`
	Status      string         `json:"status,omitempty"`
	InitiatedAt *time.Time     `json:"initiated_at,omitempty"`
	ArrivalAt   *time.Time     `json:"arrival_at,omitempty"`
	TraceID     string         `json:"trace_id,omitempty"`
	Descriptor  string         `json:"descriptor,omitempty"`
	Destination string         `json:"destination,omitempty"`
	Carried     *AmountView    `json:"carried,omitempty"`
	Left        *AmountView    `json:"left,omitempty"`
	Items       []PayoutItemVw `json:"items"`
	MoreItems   int            `json:"more_items,omitempty"`
}

// PayoutItemVw is one transaction a payout carries: its id, and what the
// books hold of it (absent when they hold nothing).
type PayoutItemVw struct {
	TxnID  string      `json:"txn_id"`
	Type   string      `json:"type,omitempty"`
	Status string      `json:"status,omitempty"`
	Amount *AmountView `json:"amount,omitempty"`
	InBook bool        `json:"in_books"`
}

// BankLineView is a line of a bank statement.
type BankLineView struct {
	ID          string      `json:"id"`
	Type        string      `json:"type"`
	Status      string      `json:"status"`
	Amount      *AmountView `json:"amount,omitempty"`
	BookingDate string      `json:"booking_date,omitempty"`
	ValueDate   string      `json:"value_date,omitempty"`
	Reversal    bool        `json:"reversal,omitempty"`
	BankRef     string      `json:"bank_ref,omitempty"`
	EndToEndID  string      `json:"end_to_end_id,omitempty"`
	Reference   string      `json:"reference,omitempty"`
	Party       string      `json:"counterparty,omitempty"`
	Text        string      `json:"text,omitempty"`
	Statement   string      `json:"statement,omitempty"`
}

// View is the JSON shape of d.
func (d *PayoutDetail) View() *PayoutDetailView {
	if d == nil {
		return nil
	}
	v := &PayoutDetailView{Payouts: []PayoutView{}, Lines: []BankLineView{}}
	for _, p := range d.Payouts {
		pv := PayoutView{Provider: p.Payout.Provider, ID: p.Payout.ID, InitiatedAt: OptTime(p.Payout.InitiatedAt),
			ArrivalAt: OptTime(p.Payout.ArrivalAt), TraceID: p.Payout.TraceID, Descriptor: p.Payout.Descriptor,
			Destination: p.Payout.Destination, Carried: ViewAmount(p.Payout.Carried), Left: ViewAmount(p.Payout.Left),
			Items: []PayoutItemVw{}, MoreItems: p.More}
		if p.Txn != nil {
			pv.Amount, pv.Status = ViewAmount(p.Txn.Amount), string(p.Txn.Status)
		}
		for _, it := range p.Items {
			iv := PayoutItemVw{TxnID: it.TxnID}
			if t := it.Txn; t != nil {
				iv.Type, iv.Status, iv.Amount, iv.InBook = string(t.Type), string(t.Status), ViewAmount(t.Amount), true
			}
			pv.Items = append(pv.Items, iv)
		}
		v.Payouts = append(v.Payouts, pv)
	}
	for _, t := range d.Charges {
		v.Charges = append(v.Charges, ViewTxn(t))
	}
	for _, l := range d.Lines {
		lv := BankLineView{ID: l.Txn.ID, Type: string(l.Txn.Type), Status: string(l.Txn.Status), Amount: ViewAmount(l.Txn.Amount),
			Reference: l.Txn.Reference, Party: l.Txn.Counterparty}
		if e := l.Entry; e != nil {
			lv.BookingDate, lv.ValueDate = dayText(e.BookingDate), dayText(e.ValueDate)
			lv.Reversal, lv.BankRef, lv.EndToEndID, lv.Text, lv.Statement = e.Reversal, e.BankRef, e.EndToEndID, e.Text, e.Statement
		}
		v.Lines = append(v.Lines, lv)
	}
	return v
}

func dayText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02")
}

// writePayoutText renders a bank finding's payouts and lines for a person.
func writePayoutText(w io.Writer, v *PayoutDetailView) {
	for _, p := range v.Payouts {
		fmt.Fprintf(w, "\nPayout %s/%s\n", p.Provider, p.ID)
		status := orDash(p.Status)
		if p.Amount == nil {
			status = "known from a report's rows only"
		}
		fmt.Fprintf(w, "  %s, %s", amountText(p.Amount), status)
		if p.ArrivalAt != nil {
			fmt.Fprintf(w, ", arrives %s", p.ArrivalAt.Format("2006-01-02"))
		}
		if p.InitiatedAt != nil {
			fmt.Fprintf(w, ", left %s", ts(*p.InitiatedAt))
		}
		for _, kv := range [][2]string{{"trace", p.TraceID}, {"descriptor", p.Descriptor}, {"to", p.Destination}} {
			if kv[1] != "" {
				fmt.Fprintf(w, ", %s %s", kv[0], kv[1])
			}
		}
		fmt.Fprintln(w)
		if p.Carried != nil || p.Left != nil {
			fmt.Fprintf(w, "  swept the balance: %s carried in, %s left behind\n", amountText(p.Carried), amountText(p.Left))
		}
		fmt.Fprintf(w, "  carries %d transaction(s)\n", len(p.Items)+p.MoreItems)
		for _, it := range p.Items {
			if !it.InBook {
				fmt.Fprintf(w, "    %s  not in the books\n", it.TxnID)
				continue
			}
			fmt.Fprintf(w, "    %s  %s %s %s\n", it.TxnID, it.Type, it.Status, amountText(it.Amount))
		}
		if p.MoreItems > 0 {
			fmt.Fprintf(w, "    ... and %d more\n", p.MoreItems)
		}
	}
	for _, c := range v.Charges {
		fmt.Fprintf(w, "\nCharge %s: %s %s %s at %s\n", c.ID, c.Type, c.Status, amountText(c.Amount), ts(c.OccurredAt))
	}
	if len(v.Lines) > 0 {
		fmt.Fprintln(w, "\nBank lines")
	}
	for _, l := range v.Lines {
		fmt.Fprintf(w, "  %s %s %s %s, booked %s", l.ID, l.Type, l.Status, amountText(l.Amount), orDash(l.BookingDate))
		if l.ValueDate != "" && l.ValueDate != l.BookingDate {
			fmt.Fprintf(w, ", value %s", l.ValueDate)
		}
		if l.Reversal {
			fmt.Fprint(w, ", a reversal")
		}
		fmt.Fprintln(w)
		for _, kv := range [][2]string{{"bank ref", l.BankRef}, {"end-to-end", l.EndToEndID}, {"counterparty", l.Party},
			{"text", l.Text}, {"statement", l.Statement}} {
			if kv[1] != "" {
				fmt.Fprintf(w, "    %s: %s\n", kv[0], kv[1])
			}
		}
	}
}
