package mpesa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/internal/jsonbody"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

// Provider is the provider name of every M-Pesa transaction.
const Provider = "mpesa"

// Currency is the currency of every M-Pesa amount.
const Currency = "KES"

// Callback kinds; each is also the Source.Channel of the sightings it yields.
const (
	KindSTK               = "stk_callback"
	KindC2BValidation     = "c2b_validation"
	KindC2BConfirmation   = "c2b_confirmation"
	KindB2C               = "b2c_result"
	KindReversal          = "reversal_result"
	KindTransactionStatus = "transaction_status_result"
	KindAccountBalance    = "account_balance_result"
	// KindReversalTimeout and KindTransactionStatusTimeout are the notices
	// posted to those APIs' QueueTimeOutURL: the request timed out in
	// M-Pesa's queue, which is no verdict (follow up with a status query).
	KindReversalTimeout          = "reversal_timeout"
	KindTransactionStatusTimeout = "transaction_status_timeout"
	// KindResult is a result callback whose API the body cannot tell: a
	// failure without parameters that arrived with no endpoint to say.
	KindResult = "result"
)

// Acknowledgement bodies Safaricom expects.
var (
	// AckSuccess answers STK callbacks, C2B confirmations and result URLs.
	AckSuccess = []byte(`{"ResultCode":0,"ResultDesc":"Success"}`)
	// AckAccepted accepts a C2B validation request.
	AckAccepted = []byte(`{"ResultCode":"0","ResultDesc":"Accepted"}`)
	// AckRejected rejects a C2B validation request whose body cannot be
	// kept as evidence (it was quarantined): M-Pesa then cancels the
	// payment instead of completing one the books could not record.
	// C2B00016 is Daraja's "other error" (C2B00011 to C2B00015 name an
	// invalid MSISDN, account number, amount, KYC details or short code).
	AckRejected = []byte(`{"ResultCode":"C2B00016","ResultDesc":"Rejected"}`)
)

// CallbackParser turns Daraja callback bodies into evidence. It tells the
// kind by the body's shape; ParseCallbackKind also uses the endpoint's word.
// The zero value is ready to use.
//
// Source refs are built from the callback's own identifiers
// ("stk:<CheckoutRequestID>", "c2b:<TransID>", "result:<ConversationID>"),
// not from the delivery, so the same callback delivered twice, even with
// different bytes, is one sighting. The delivery ref names the body in
// errors.
type CallbackParser struct {
	// Accounts, when set, names the account of a C2B confirmation's
	// BusinessShortCode ("" for the default account); a shortcode it does
	// not know is refused. Unset, every payment is the default account's.
	Accounts *Accounts
}

var (
	_ providers.CallbackParser = CallbackParser{}
	_ intake.KindParser        = CallbackParser{}
)

// ParseCallback parses a body whose kind only its shape tells. A C2B body is
// taken as a confirmation.
func (p CallbackParser) ParseCallback(body []byte, ref string, receivedAt time.Time) (providers.Evidence, error) {
	return p.ParseCallbackKind("", body, ref, receivedAt)
}

// ParseCallbackKind parses a body that arrived at the endpoint for kind. The
// kind decides what the shape cannot: a C2B body at the validation endpoint
// is a validation (which moves no money and yields no sighting), and a
// result without parameters belongs to the endpoint's API. When the shape
// contradicts the kind, the shape wins.
func (cp CallbackParser) ParseCallbackKind(kind string, body []byte, ref string, receivedAt time.Time) (providers.Evidence, error) {
	p := parser{ref: ref, receivedAt: receivedAt.UTC(), raw: body, accounts: cp.Accounts}
	root, err := p.root(body)
	if err != nil {
		return providers.Evidence{}, err
	}
	if b, ok := lookup(root.m, "Body"); ok {
		return p.stk(root.at("Body", b))
	}
	if r, ok := lookup(root.m, "Result"); ok {
		return p.result(root.at("Result", r), kind)
	}
	_, hasID := lookup(root.m, "TransID")
	_, hasAmount := lookup(root.m, "TransAmount")
	if hasID || hasAmount {
		return p.c2b(root, kind == KindC2BValidation)
	}
	return providers.Evidence{}, p.fail("body", errors.New("not an M-Pesa callback (want Body.stkCallback, Result, or a C2B TransID)"))
}

// parser holds one body being parsed.
type parser struct {
	ref        string
	receivedAt time.Time
	raw        []byte
	accounts   *Accounts
}

func (p *parser) fail(field string, err error) *ledger.ParseError {
	return &ledger.ParseError{File: p.ref, Field: field, Err: err}
}

// node is a JSON value at a path.
type node struct {
	path string
	raw  json.RawMessage
	m    map[string]json.RawMessage
}

func (n node) at(name string, raw json.RawMessage) node {
	path := name
	if n.path != "" {
		path = n.path + "." + name
	}
	return node{path: path, raw: raw}
}

func (p *parser) root(body []byte) (node, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return node{}, p.fail("body", errors.New("is empty"))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return node{}, p.fail("body", jsonProblem(err))
	}
	if m == nil {
		return node{}, p.fail("body", errors.New("is null, not a JSON object"))
	}
	if perr := p.checkBody(body); perr != nil {
		return node{}, perr
	}
	return node{m: m}, nil
}

// checkBody applies the rule every JSON body is read under
// (internal/jsonbody) to a callback encoding/json has read: bytes that are
// not UTF-8 (which it would turn into U+FFFD) and an object that names a
// key twice (of which it would keep the last value silently), keys
// differing only in case included, as lookup finds them either way. The
// error names the repeated key's path as its field.
func (p *parser) checkBody(body []byte) *ledger.ParseError {
	err := jsonbody.Check(body)
	var dup *jsonbody.DuplicateKeyError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &dup):
		return p.fail(dup.Path, errors.New(dup.Reason()))
	}
	return p.fail("body", err)
}

// jsonProblem rewords encoding/json's errors about the document as a whole.
func jsonProblem(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end"):
		return fmt.Errorf("is truncated JSON (unexpected end of input at byte %d)", se.Offset)
	case errors.As(err, &se):
		return fmt.Errorf("is not valid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		return fmt.Errorf("is a JSON %s, not an object", te.Value)
	case err.Error() == "unexpected end of JSON input":
		return errors.New("is truncated JSON (unexpected end of input)")
	}
	return err
}

// object decodes n as a JSON object.
func (p *parser) object(n node) (node, error) {
	if n.m != nil {
		return n, nil
	}
	raw := bytes.TrimSpace(n.raw)
	if len(raw) == 0 || raw[0] != '{' {
		return n, p.fail(n.path, fmt.Errorf("is %s, not an object", describe(raw)))
	}
	if err := json.Unmarshal(raw, &n.m); err != nil {
		return n, p.fail(n.path, err)
	}
	return n, nil
}

func describe(raw []byte) string {
	if len(raw) == 0 {
		return "missing"
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

// scalar returns the flex at name in n (unset when absent).
func (p *parser) scalar(n node, name string) (flex, error) {
	raw, _ := lookup(n.m, name)
	f, err := flexOf(raw)
	if err != nil {
		return f, p.fail(n.at(name, nil).path, err)
	}
	return f, nil
}

// required returns the trimmed text at name, or an error naming the field
// when it is absent, null or blank.
func (p *parser) required(n node, name string) (string, error) {
	f, err := p.scalar(n, name)
	if err != nil {
		return "", err
	}
	if f.String() == "" {
		return "", p.fail(n.at(name, nil).path, errMissing)
	}
	return f.String(), nil
}

var errMissing = errors.New("is missing")

// resultCode normalises a ResultCode: "0", "1032", "R000002", "SFC_IC0003".
// A number is kept as its digits ("0.0" is not a code).
func (p *parser) resultCode(n node, name string) (string, error) {
	code, err := p.required(n, name)
	if err != nil {
		return "", err
	}
	for _, r := range code {
		if !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '_' || r == '.' || r == '-') {
			return "", p.fail(n.at(name, nil).path, fmt.Errorf("%q is not a result code", code))
		}
	}
	return code, nil
}

var receiptPattern = regexp.MustCompile(`^[A-Z0-9]{6,20}$`)

// isReceipt says whether s matches receiptPattern, checked by hand (it
// runs on every statement line): 6 to 20 of A-Z and 0-9, all ASCII, so
// bytes are characters.
func isReceipt(s string) bool {
	if len(s) < 6 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// receipt validates and upper-cases an M-Pesa receipt number.
func receipt(s string) (string, error) {
	r := strings.ToUpper(strings.TrimSpace(s))
	if r == "" {
		return "", errMissing
	}
	if !isReceipt(r) {
		return "", fmt.Errorf("%q is not an M-Pesa receipt number (6 to 20 letters and digits)", s)
	}
	return r, nil
}

// amount parses an M-Pesa amount from its raw text: a JSON number's digits
// or a string. It must be a positive KES amount with at most two decimals.
func amount(f flex) (money.Amount, error) {
	s := f.String()
	if s == "" {
		return money.Amount{}, errMissing
	}
	a, err := money.Parse(s, Currency)
	if err != nil {
		return money.Amount{}, err
	}
	if !a.Value.IsPositive() {
		return money.Amount{}, fmt.Errorf("%s is not positive", s)
	}
	return a, nil
}

func (p *parser) amountAt(n node, name string) (money.Amount, error) {
	f, err := p.scalar(n, name)
	if err != nil {
		return money.Amount{}, err
	}
	a, err := amount(f)
	if err != nil {
		return a, p.fail(n.at(name, nil).path, err)
	}
	return a, nil
}

// sighting validates a transaction and wraps it with its source.
func (p *parser) sighting(t ledger.ProviderTxn, channel, ref string) (providers.Sighting, error) {
	t.Provider = Provider
	if err := ledger.ValidateTxn(t); err != nil {
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			return providers.Sighting{}, p.fail(fe.Field, fe.Err)
		}
		return providers.Sighting{}, p.fail("", err)
	}
	return providers.Sighting{Txn: t, Source: ledger.Source{Channel: channel, Ref: ref, Raw: p.raw, ReceivedAt: p.receivedAt}}, nil
}

// stk reads an STK push callback: the verdict on the charge attempt named
// by its CheckoutRequestID and, on success, the payment's sighting.
func (p *parser) stk(body node) (providers.Evidence, error) {
	cb, err := p.stkCallback(body)
	if err != nil {
		return providers.Evidence{}, err
	}
	ev := providers.Evidence{Kind: KindSTK, Ack: AckSuccess}
	checkout, err := p.required(cb, "CheckoutRequestID")
	if err != nil {
		return ev, err
	}
	code, err := p.resultCode(cb, "ResultCode")
	if err != nil {
		return ev, err
	}
	descF, err := p.scalar(cb, "ResultDesc")
	if err != nil {
		return ev, err
	}
	desc := descF.String()
	if code != "0" {
		ev.Outcomes = []providers.AttemptOutcome{{ProviderRef: checkout, Status: providers.StatusFailed,
			Code: code, Reason: desc, At: p.receivedAt}}
		return ev, nil
	}
	paid, err := p.stkMetadata(cb)
	if err != nil {
		return ev, err
	}
	s, err := p.sighting(ledger.ProviderTxn{ID: paid.rcpt, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: paid.amt,
		OccurredAt: paid.at, ProviderRef: checkout, Counterparty: counterparty(paid.phone.String(), "")},
		KindSTK, "stk:"+checkout)
	if err != nil {
		return ev, err
	}
	ev.Sightings = []providers.Sighting{s}
	ev.Outcomes = []providers.AttemptOutcome{{ProviderRef: checkout, Status: providers.StatusSucceeded, TxnID: paid.rcpt,
		Amount: paid.amt, Code: code, Reason: desc, At: paid.at}}
	return ev, nil
}

// stkCallback is the stkCallback object inside an STK callback's Body.
func (p *parser) stkCallback(body node) (node, error) {
	body, err := p.object(body)
	if err != nil {
		return node{}, err
	}
	raw, ok := lookup(body.m, "stkCallback")
	if !ok {
		return node{}, p.fail(body.path+".stkCallback", errMissing)
	}
	return p.object(body.at("stkCallback", raw))
}

// stkPaid is what the CallbackMetadata of a successful STK callback says
// of the payment.
type stkPaid struct {
	amt   money.Amount
	rcpt  string
	at    time.Time
	phone flex
}

// stkMetadata reads the CallbackMetadata of a successful STK callback: the
// amount, receipt and time it must carry and the phone number it may.
func (p *parser) stkMetadata(cb node) (stkPaid, error) {
	metaRaw, ok := lookup(cb.m, "CallbackMetadata")
	if !ok {
		return stkPaid{}, p.fail(cb.path+".CallbackMetadata", fmt.Errorf("%w on a successful callback (ResultCode 0)", errMissing))
	}
	var meta kvList
	if err := json.Unmarshal(metaRaw, &meta); err != nil {
		return stkPaid{}, p.fail(cb.path+".CallbackMetadata", err)
	}
	path := cb.path + ".CallbackMetadata.Item."
	get := func(name string, need bool) (flex, error) {
		f, found, err := meta.Items.get(name)
		if err != nil {
			return f, p.fail(path+name, err)
		}
		if need && (!found || f.String() == "") {
			return f, p.fail(path+name, errMissing)
		}
		return f, nil
	}
	var paid stkPaid
	amtF, err := get("Amount", true)
	if err != nil {
		return stkPaid{}, err
	}
	if paid.amt, err = amount(amtF); err != nil {
		return stkPaid{}, p.fail(path+"Amount", err)
	}
	rcptF, err := get("MpesaReceiptNumber", true)
	if err != nil {
		return stkPaid{}, err
	}
	if paid.rcpt, err = receipt(rcptF.String()); err != nil {
		return stkPaid{}, p.fail(path+"MpesaReceiptNumber", err)
	}
	dateF, err := get("TransactionDate", true)
	if err != nil {
		return stkPaid{}, err
	}
	if paid.at, err = parseCompact(dateF.String()); err != nil {
		return stkPaid{}, p.fail(path+"TransactionDate", err)
	}
	if paid.phone, err = get("PhoneNumber", false); err != nil {
		return stkPaid{}, err
	}
	return paid, nil
}

func (p *parser) c2b(n node, validation bool) (providers.Evidence, error) {
	ev := providers.Evidence{Kind: KindC2BConfirmation, Ack: AckSuccess}
	if validation {
		ev = providers.Evidence{Kind: KindC2BValidation, Ack: AckAccepted}
	}
	idText, err := p.required(n, "TransID")
	if err != nil {
		return ev, err
	}
	id, err := receipt(idText)
	if err != nil {
		return ev, p.fail("TransID", err)
	}
	amt, err := p.amountAt(n, "TransAmount")
	if err != nil {
		return ev, err
	}
	timeText, err := p.required(n, "TransTime")
	if err != nil {
		return ev, err
	}
	at, err := parseCompact(timeText)
	if err != nil {
		return ev, p.fail("TransTime", err)
	}
	var text [5]string
	for i, name := range []string{"BillRefNumber", "MSISDN", "FirstName", "TransactionType", "BusinessShortCode"} {
		f, err := p.scalar(n, name)
		if err != nil {
			return ev, err
		}
		text[i] = f.String()
	}
	account, err := p.accounts.Of(text[4])
	if err != nil {
		return ev, p.fail("BusinessShortCode", err)
	}
	if validation {
		// A validation asks whether to accept a payment that has not
		// happened yet: it moves no money and is kept only as the stored
		// callback.
		return ev, nil
	}
	s, err := p.sighting(ledger.ProviderTxn{ID: id, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: amt,
		OccurredAt: at, Reference: text[0], Counterparty: counterparty(text[1], text[2]), Account: account},
		KindC2BConfirmation, "c2b:"+id)
	if err != nil {
		return ev, err
	}
	ev.Sightings = []providers.Sighting{s}
	return ev, nil
}
