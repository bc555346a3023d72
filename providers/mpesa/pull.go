package mpesa

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// ChannelPull is the Source.Channel of Pull Transactions API records.
const ChannelPull = "pull"

// PullLookback is how far back the Pull Transactions API reaches.
const PullLookback = 48 * time.Hour

// DefaultPullMaxPages bounds the pages of one pull when PullConfig sets none.
const DefaultPullMaxPages = 1000

// ErrPullWindow reports a window the Pull Transactions API cannot serve
// (it starts more than 48 hours ago); use the portal statement instead.
var ErrPullWindow = errors.New("outside the Pull Transactions API's 48-hour look-back")

// PullConfig configures the Pull Transactions API.
type PullConfig struct {
	// ShortCode to pull for; default Config.ShortCode.
	ShortCode string
	// NominatedNumber and CallbackURL are sent on registration (Register).
	// The nominated number is a phone number: it is masked wherever it is
	// kept or shown.
	NominatedNumber string
	CallbackURL     string
	// CallbackSecret is the secret part of CallbackURL (the callback path
	// token), hidden in the registration the books record.
	CallbackSecret string
	// MaxPages bounds the pages of one pull; default DefaultPullMaxPages.
	MaxPages int
	// OnReject receives a record that cannot be read, with the raw record.
	// When nil a bad record fails the pull.
	OnReject func(ctx context.Context, perr *ledger.ParseError, raw []byte) error
}

// Puller fetches C2B transactions through the Pull Transactions API, to
// fill callbacks that never arrived. It implements providers.Puller.
type Puller struct {
	d  *daraja
	pc PullConfig
}

var _ providers.Puller = (*Puller)(nil)

// NewPuller checks the configs and returns a puller.
func NewPuller(cfg Config, pc PullConfig) (*Puller, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if pc.ShortCode == "" {
		pc.ShortCode = cfg.ShortCode
	}
	if pc.MaxPages <= 0 {
		pc.MaxPages = DefaultPullMaxPages
	}
	return &Puller{d: &daraja{cfg: cfg}, pc: pc}, nil
}

// Register registers the short code for pulling, with the nominated
// number and callback URL of PullConfig, and returns Daraja's answer.
// Already being registered (ResponseStatus 1001) is success. Registering
// once is enough: EnsureRegistered registers only what the books do not
// record as registered.
func (p *Puller) Register(ctx context.Context) (Registration, error) {
	reg := Registration{ShortCode: p.pc.ShortCode}
	if strings.TrimSpace(p.pc.NominatedNumber) == "" {
		return reg, fmt.Errorf("mpesa: pull register %s: no nominated number to register with", p.pc.ShortCode)
	}
	rep, err := p.d.post(ctx, "/pulltransactions/v1/register", map[string]string{"ShortCode": p.pc.ShortCode,
		"RequestType": "Pull", "NominatedNumber": p.pc.NominatedNumber, "CallBackURL": p.pc.CallbackURL})
	if err != nil {
		return reg, fmt.Errorf("mpesa: pull register %s: %w", p.pc.ShortCode, err)
	}
	if rep.status != http.StatusOK || rep.daraja.present() {
		return reg, fmt.Errorf("mpesa: pull register %s: %w", p.pc.ShortCode, classify(rep, "pull register"))
	}
	var out struct {
		ResponseRefID       flex `json:"ResponseRefID"`
		ResponseStatus      flex `json:"ResponseStatus"`
		ResponseCode        flex `json:"ResponseCode"`
		ResponseDescription flex `json:"ResponseDescription"`
	}
	if err := json.Unmarshal(rep.body, &out); err != nil {
		return reg, fmt.Errorf("mpesa: pull register %s: unreadable answer: %w", p.pc.ShortCode, jsonProblem(err))
	}
	reg.RefID, reg.Status, reg.Description = out.ResponseRefID.String(), out.ResponseStatus.String(), out.ResponseDescription.String()
	if reg.Status == "" {
		reg.Status = out.ResponseCode.String()
	}
	if reg.Status != RegisteredNew && reg.Status != RegisteredAlready && reg.Status != "0" {
		return reg, fmt.Errorf("mpesa: pull register %s: status %s: %s", p.pc.ShortCode, ledger.Clip(reg.Status),
			ledger.Clip(reg.Description))
	}
	return reg, nil
}

// Pull fetches the transactions of [from, to) page by page (OffSetValue)
// and emits each as a sighting on channel "pull" with ref "pull:<receipt>".
// A window starting more than 48 hours before now fails with ErrPullWindow;
// to is capped at now.
func (p *Puller) Pull(ctx context.Context, from, to time.Time, emit func(providers.Sighting) error) error {
	now := p.d.cfg.Clock()
	if from.Before(now.Add(-PullLookback)) {
		return fmt.Errorf("mpesa: pull %s to %s: start is %s before now: %w",
			from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), now.Sub(from).Round(time.Minute), ErrPullWindow)
	}
	if to.After(now) {
		to = now
	}
	if !from.Before(to) {
		return nil
	}
	// seen holds every record of this pull, raw: a record seen again (a
	// server that ignores the offset, overlapping pages) is skipped.
	seen := map[string]bool{}
	offset := 0
	for page := 0; ; page++ {
		if page == p.pc.MaxPages {
			return fmt.Errorf("mpesa: pull %s to %s: more than %d pages", from.UTC().Format(time.RFC3339),
				to.UTC().Format(time.RFC3339), p.pc.MaxPages)
		}
		records, done, err := p.query(ctx, from, to, offset)
		if err != nil {
			return err
		}
		fresh := 0
		for i, raw := range records {
			key := string(bytes.TrimSpace(raw))
			if seen[key] {
				continue
			}
			seen[key] = true
			fresh++
			s, perr := ParsePullRecord(raw, offset+i+1, now)
			if perr != nil {
				if p.pc.OnReject == nil {
					return fmt.Errorf("mpesa: pull: %w", perr)
				}
				if err := p.pc.OnReject(ctx, perr, raw); err != nil {
					return err
				}
				continue
			}
			if err := emit(s); err != nil {
				return err
			}
		}
		// An empty page ends the pull; so does a page of records already
		// seen, which guards against a server that ignores the offset.
		if done || len(records) == 0 || fresh == 0 {
			return nil
		}
		offset += len(records)
	}
}

func (p *Puller) query(ctx context.Context, from, to time.Time, offset int) ([]json.RawMessage, bool, error) {
	rep, err := p.d.post(ctx, "/pulltransactions/v1/query", map[string]string{"ShortCode": p.pc.ShortCode,
		"StartDate": from.In(EAT).Format(pullLayout), "EndDate": to.In(EAT).Format(pullLayout),
		"OffSetValue": fmt.Sprint(offset)})
	if err != nil {
		return nil, false, fmt.Errorf("mpesa: pull query at offset %d: %w", offset, err)
	}
	if rep.status != http.StatusOK || rep.daraja.present() {
		perr := classify(rep, "pull query")
		if notRegistered(perr) {
			return nil, false, fmt.Errorf("mpesa: pull query at offset %d: short code %s %w: register it with `%s --force` (%w)",
				offset, p.pc.ShortCode, ErrNotRegistered, RegisterCommand, perr)
		}
		return nil, false, fmt.Errorf("mpesa: pull query at offset %d: %w", offset, perr)
	}
	records, code, err := pullRecords(rep.body)
	if err != nil {
		return nil, false, fmt.Errorf("mpesa: pull query at offset %d: %w", offset, err)
	}
	switch code {
	case "1000", "0", "":
		return records, false, nil
	case "1001":
		// No (more) transactions.
		return records, true, nil
	}
	return nil, false, fmt.Errorf("mpesa: pull query at offset %d: ResponseCode %s", offset, code)
}

// pullEnvelopeKeys are the names the transaction list has been seen or
// guessed under.
var pullEnvelopeKeys = []string{"Response", "Transaction", "Transactions", "Data", "Result", "Records"}

// pullRecords finds the transaction list of a query answer: under any of
// pullEnvelopeKeys, as an array, an array of arrays, or a string holding
// either ("[[]]").
func pullRecords(body []byte) ([]json.RawMessage, string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, "", fmt.Errorf("unreadable answer: %w", jsonProblem(err))
	}
	code, _ := flexOf(m["ResponseCode"])
	for _, k := range pullEnvelopeKeys {
		raw, ok := lookup(m, k)
		if !ok {
			continue
		}
		var out []json.RawMessage
		if err := flattenRecords(raw, &out, 0); err != nil {
			return nil, code.String(), fmt.Errorf("field %s: %w", k, err)
		}
		return out, code.String(), nil
	}
	return nil, code.String(), nil
}

func flattenRecords(raw json.RawMessage, out *[]json.RawMessage, depth int) error {
	raw = bytes.TrimSpace(raw)
	if depth > 3 {
		return errors.New("nested too deep")
	}
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			return nil
		}
		return flattenRecords(json.RawMessage(s), out, depth+1)
	case '[':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return err
		}
		for _, el := range list {
			if err := flattenRecords(el, out, depth+1); err != nil {
				return err
			}
		}
		return nil
	case '{':
		*out = append(*out, raw)
		return nil
	}
	return fmt.Errorf("is %s, not a list of transactions", describe(raw))
}

// pullType classifies a Pull API transactiontype ("c2b-pay-bill-debit").
func pullType(s string) (ledger.TxnType, bool) {
	t := strings.ToLower(s)
	switch {
	case strings.Contains(t, "reversal"):
		return ledger.TxnReversal, true
	case strings.Contains(t, "charge"), strings.Contains(t, "fee"):
		return ledger.TxnFee, true
	case strings.Contains(t, "b2c"), strings.Contains(t, "withdraw"), strings.Contains(t, "disburse"):
		return ledger.TxnPayout, true
	case strings.Contains(t, "c2b"), strings.Contains(t, "pay-bill"), strings.Contains(t, "paybill"),
		strings.Contains(t, "buy-goods"), strings.Contains(t, "buygoods"), strings.Contains(t, "till"):
		return ledger.TxnCharge, true
	}
	return "", false
}

// pullFail is the error of field of the nth record of a pull.
func pullFail(n int, field string, err error) *ledger.ParseError {
	return &ledger.ParseError{File: "pull", Line: n, Field: field, Err: err}
}

// pullRoot decodes the nth record of a pull, raw, as a JSON object.
func (ps *parser) pullRoot(raw []byte, n int) (node, *ledger.ParseError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("is null")
		}
		return node{}, pullFail(n, "record", jsonProblem(err))
	}
	if perr := ps.checkBody(raw); perr != nil {
		if perr.Field == "body" {
			perr.Field = "record"
		}
		return node{}, pullFail(n, perr.Field, perr.Err)
	}
	return node{m: m}, nil
}

// pullOccurred parses the trxDate of the nth record of a pull.
func pullOccurred(when string, n int) (time.Time, *ledger.ParseError) {
	if when == "" {
		return time.Time{}, pullFail(n, "trxDate", errMissing)
	}
	at, err := parsePullTime(when)
	if err != nil {
		return time.Time{}, pullFail(n, "trxDate", err)
	}
	return at, nil
}

// pullKind is the transaction type the transactiontype of the nth record
// of a pull names.
func pullKind(typText string, n int) (ledger.TxnType, *ledger.ParseError) {
	typ, ok := pullType(typText)
	if !ok {
		if typText == "" {
			return "", pullFail(n, "transactiontype", errMissing)
		}
		return "", pullFail(n, "transactiontype", fmt.Errorf("%q is not a known transaction type", typText))
	}
	return typ, nil
}

// ParsePullRecord normalises one Pull Transactions API record. n numbers the
// record in the pull (offset + position) for errors.
func ParsePullRecord(raw []byte, n int, receivedAt time.Time) (providers.Sighting, *ledger.ParseError) {
	ps := parser{ref: "pull", receivedAt: receivedAt.UTC(), raw: raw}
	fail := func(field string, err error) *ledger.ParseError {
		return pullFail(n, field, err)
	}
	root, perr := ps.pullRoot(raw, n)
	if perr != nil {
		return providers.Sighting{}, perr
	}
	text := func(name string) (string, *ledger.ParseError) {
		f, err := ps.scalar(root, name)
		if err != nil {
			return "", fail(name, errors.Unwrap(err))
		}
		return f.String(), nil
	}
	idText, perr := text("transactionId")
	if perr != nil {
		return providers.Sighting{}, perr
	}
	id, err := receipt(idText)
	if err != nil {
		return providers.Sighting{}, fail("transactionId", err)
	}
	amtF, err := ps.scalar(root, "amount")
	if err != nil {
		return providers.Sighting{}, fail("amount", errors.Unwrap(err))
	}
	amt, err := amount(amtF)
	if err != nil {
		return providers.Sighting{}, fail("amount", err)
	}
	when, perr := text("trxDate")
	if perr != nil {
		return providers.Sighting{}, perr
	}
	at, perr := pullOccurred(when, n)
	if perr != nil {
		return providers.Sighting{}, perr
	}
	typText, perr := text("transactiontype")
	if perr != nil {
		return providers.Sighting{}, perr
	}
	typ, perr := pullKind(typText, n)
	if perr != nil {
		return providers.Sighting{}, perr
	}
	ref, perr := text("billreference")
	if perr != nil {
		return providers.Sighting{}, perr
	}
	msisdn, perr := text("msisdn")
	if perr != nil {
		return providers.Sighting{}, perr
	}
	t := ledger.ProviderTxn{Provider: Provider, ID: id, Type: typ, Status: ledger.TxnSucceeded, Amount: amt, OccurredAt: at,
		Reference: ref, Counterparty: counterparty(msisdn, "")}
	if err := ledger.ValidateTxn(t); err != nil {
		return providers.Sighting{}, fail("record", err)
	}
	out := providers.Sighting{Txn: t, Source: ledger.Source{Channel: ChannelPull, Ref: "pull:" + id, Raw: bytes.Clone(raw),
		ReceivedAt: receivedAt.UTC()}}
	if typ == ledger.TxnPayout && isSettlement(typText, "") {
		// A settlement to the bank, should the pull carry one: a payout,
		// whose rows only the portal statement tells.
		out.Payout = &ledger.Payout{Provider: Provider, ID: id, InitiatedAt: at}
	}
	return out, nil
}
