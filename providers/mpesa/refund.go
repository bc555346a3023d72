package mpesa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// Refunds on M-Pesa are reversals: the Reversal API gives a customer's
// payment back, and its verdict comes later by a result callback (or a queue
// timeout notice). Like an STK push it takes no idempotency key, so the
// charger still does not implement providers.KeyHonourer: a reversal whose
// outcome is not known must never be sent again. QueryRefundStatus asks the
// Transaction Status API instead, whose answer is a callback too.
//
// Every refund attempt is known by the OriginatorConversationID of its
// reversal request. It is the id that both the result and the timeout
// notice echo in their envelope, and the one the Transaction Status API
// accepts (as OriginalConversationID) to find a transaction whose receipt we
// never learned, which is exactly the reversal whose result was lost. The
// ConversationID is echoed too, but the status API cannot be asked by it.

var (
	_ providers.Refunder            = (*Charger)(nil)
	_ providers.RefundStatusQuerier = (*Charger)(nil)
	_ providers.RefundChecker       = (*Charger)(nil)
)

// Daraja paths of the refund APIs.
const (
	reversalPath = "/mpesa/reversal/v1/request"
	statusPath   = "/mpesa/transactionstatus/v1/query"
)

// Limits of the free-text fields of the Reversal and Transaction Status
// requests.
const maxRemarks = 100

// occasionPrefix starts the Occasion of a status query about a reversal:
// "reversal:<OriginatorConversationID>:<original receipt>". Daraja echoes the
// Occasion in the result's ReferenceData, so the result names the refund
// attempt it answers and the charge that attempt returns money for.
const occasionPrefix = "reversal:"

type reversalRequest struct {
	Initiator          string      `json:"Initiator"`
	SecurityCredential string      `json:"SecurityCredential"`
	CommandID          string      `json:"CommandID"`
	TransactionID      string      `json:"TransactionID"`
	Amount             json.Number `json:"Amount"`
	ReceiverParty      string      `json:"ReceiverParty"`
	// RecieverIdentifierType is misspelled as Daraja spells it; 11 is an
	// organisation's shortcode for reversals.
	RecieverIdentifierType string `json:"RecieverIdentifierType"`
	ResultURL              string `json:"ResultURL"`
	QueueTimeOutURL        string `json:"QueueTimeOutURL"`
	Remarks                string `json:"Remarks"`
	Occasion               string `json:"Occasion"`
}

type statusRequest struct {
	Initiator          string `json:"Initiator"`
	SecurityCredential string `json:"SecurityCredential"`
	CommandID          string `json:"CommandID"`
	// TransactionID is left out: a reversal whose result was lost has no
	// receipt we know; OriginalConversationID finds it.
	TransactionID          string `json:"TransactionID,omitempty"`
	OriginalConversationID string `json:"OriginalConversationID"`
	PartyA                 string `json:"PartyA"`
	// IdentifierType 4 is an organisation shortcode.
	IdentifierType  string `json:"IdentifierType"`
	ResultURL       string `json:"ResultURL"`
	QueueTimeOutURL string `json:"QueueTimeOutURL"`
	Remarks         string `json:"Remarks"`
	Occasion        string `json:"Occasion"`
}

// asyncResponse is the synchronous acknowledgement of the Reversal and
// Transaction Status APIs: accepted, not done.
type asyncResponse struct {
	OriginatorConversationID flex `json:"OriginatorConversationID"`
	ConversationID           flex `json:"ConversationID"`
	ResponseCode             flex `json:"ResponseCode"`
	ResponseDescription      flex `json:"ResponseDescription"`
}

// Refund asks M-Pesa to reverse the charge whose receipt is
// req.ChargeTxnID, for req.Amount (whole shillings). Success means only that
// the request was accepted: the result is pending, with the request's
// OriginatorConversationID as ProviderRef; the verdict comes by the result
// callback (or, when it is lost, by QueryRefundStatus). A request that can
// never be valid (not KES, not whole shillings, no receipt) fails as
// Permanent with a *ledger.FieldError before anything is sent; missing
// refund configuration (initiator, credential, result URLs) fails as
// Retryable, as nothing was sent. Other errors are classified like the STK
// push's.
func (c *Charger) Refund(ctx context.Context, req providers.RefundRequest) (providers.ChargeResult, error) {
	body, err := c.reversalRequest(req)
	if err != nil {
		return providers.ChargeResult{}, err
	}
	rep, err := c.d.post(ctx, reversalPath, body)
	if err != nil {
		return providers.ChargeResult{}, err
	}
	out, err := accepted(rep, "reversal")
	if err != nil {
		return providers.ChargeResult{}, err
	}
	ref := out.OriginatorConversationID.String()
	if ref == "" {
		return providers.ChargeResult{}, providerErr(providers.Ambiguous, "", "reversal: accepted without an OriginatorConversationID", nil)
	}
	return providers.ChargeResult{ProviderRef: ref, Status: providers.StatusPending, Code: out.ResponseCode.String(),
		Reason: out.ResponseDescription.String(), At: c.d.cfg.Clock().UTC()}, nil
}

// CheckRefund says whether req could ever be sent as a reversal: the checks
// Refund makes before sending anything. The error wraps a *ledger.FieldError
// naming the field at fault (amount, charge_txn_id).
func (c *Charger) CheckRefund(req providers.RefundRequest) error {
	_, err := c.reversalFields(req)
	return err
}

// refundFields are a refund request's checked values.
type refundFields struct {
	receipt string
	amount  json.Number
}

func invalidRefund(field string, err error) error {
	return &providers.Error{Provider: Provider, Kind: providers.Permanent, Code: "invalid_request",
		Message: fmt.Sprintf("reversal: %s: %v", field, err), Err: &ledger.FieldError{Field: field, Err: err}}
}

func (c *Charger) reversalFields(req providers.RefundRequest) (refundFields, error) {
	if req.Amount.Currency != Currency {
		return refundFields{}, invalidRefund("amount", fmt.Errorf("currency %q, M-Pesa reverses only %s", req.Amount.Currency, Currency))
	}
	if !req.Amount.Value.IsInteger() || req.Amount.Value.LessThan(oneShilling) {
		return refundFields{}, invalidRefund("amount", fmt.Errorf("%s is not a whole number of shillings of at least 1", req.Amount.Text()))
	}
	if strings.TrimSpace(req.ChargeTxnID) == "" {
		// The books do not hold the charge's receipt yet (its callback
		// never came; a statement or pull brings it): nothing is sent, and
		// the job tries again later.
		return refundFields{}, &providers.Error{Provider: Provider, Kind: providers.Retryable, Code: "receipt_unknown",
			Message: "reversal: charge_txn_id: the charge's M-Pesa receipt is not in the books yet (import the statement or wait for the pull)",
			Err: fmt.Errorf("%w: %w", providers.ErrAwaitingEvidence,
				&ledger.FieldError{Field: "charge_txn_id", Err: errors.New("the charge's M-Pesa receipt is not known yet")})}
	}
	rcpt, err := receipt(req.ChargeTxnID)
	if err != nil {
		return refundFields{}, invalidRefund("charge_txn_id", fmt.Errorf("the charge's M-Pesa receipt: %w", err))
	}
	if placeholderID.MatchString(rcpt) {
		return refundFields{}, invalidRefund("charge_txn_id", fmt.Errorf("%q is a placeholder, not a receipt", rcpt))
	}
	return refundFields{receipt: rcpt, amount: json.Number(req.Amount.Value.StringFixed(0))}, nil
}

// RefundsEnabled says whether refunds can be sent: an initiator, its
// credential and the reversal result URLs are configured. Without them a
// refund intent is recorded and reconciled but given no job.
func (c *Charger) RefundsEnabled() bool {
	return c.initiatorConfigured("refund", c.d.cfg.ReversalURLs) == nil
}

// initiatorConfigured says what refunds lack, as a Retryable error: nothing
// was sent, and a person fixes the configuration.
func (c *Charger) initiatorConfigured(what string, urls ResultURLs) error {
	cfg := c.d.cfg
	var missing []string
	if cfg.Initiator == "" {
		missing = append(missing, "Initiator")
	}
	if cfg.SecurityCredential == "" {
		missing = append(missing, "SecurityCredential")
	}
	if urls.Result == "" || urls.Timeout == "" {
		missing = append(missing, "result and timeout URLs")
	}
	if len(missing) == 0 {
		return nil
	}
	return providerErr(providers.Retryable, "not_configured", fmt.Sprintf("%s: not configured: %s missing", what, strings.Join(missing, ", ")), nil)
}

func (c *Charger) reversalRequest(req providers.RefundRequest) (reversalRequest, error) {
	cfg := c.d.cfg
	f, err := c.reversalFields(req)
	if err != nil {
		return reversalRequest{}, err
	}
	if err := c.initiatorConfigured("reversal", cfg.ReversalURLs); err != nil {
		return reversalRequest{}, err
	}
	remarks := clipText(req.Reason, maxRemarks)
	if remarks == "" {
		remarks = "Refund"
	}
	return reversalRequest{Initiator: cfg.Initiator, SecurityCredential: cfg.SecurityCredential, CommandID: "TransactionReversal",
		TransactionID: f.receipt, Amount: f.amount, ReceiverParty: cfg.ShortCode, RecieverIdentifierType: "11",
		ResultURL: cfg.ReversalURLs.Result, QueueTimeOutURL: cfg.ReversalURLs.Timeout, Remarks: remarks,
		Occasion: clipText(req.RefundKey, maxRemarks)}, nil
}

// clipText trims s and keeps at most n runes of it.
func clipText(s string, n int) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > n {
		s = strings.TrimSpace(string(r[:n]))
	}
	return s
}

// QueryRefundStatus asks the Transaction Status API about the reversal whose
// OriginatorConversationID is providerRef. The API answers by callback, so
// once the question is accepted the result is StatusUnknown: the attempt
// stays unknown until the status result (or the reversal's own result, or a
// statement) settles it. The query carries providerRef and the charge's
// receipt in its Occasion, which Daraja echoes, so the status result names
// the attempt. Errors: Permanent when providerRef is empty or Daraja refuses
// the query for good, Retryable when it was not sent or refused before
// processing, Ambiguous otherwise; none of them can move money.
func (c *Charger) QueryRefundStatus(ctx context.Context, req providers.RefundRequest, providerRef string) (providers.ChargeResult, error) {
	cfg := c.d.cfg
	providerRef = strings.TrimSpace(providerRef)
	if providerRef == "" {
		return providers.ChargeResult{}, providerErr(providers.Permanent, "invalid_request", "transaction status: empty OriginatorConversationID", nil)
	}
	if err := c.initiatorConfigured("transaction status", cfg.StatusURLs); err != nil {
		return providers.ChargeResult{}, err
	}
	original := ""
	if r, err := receipt(req.ChargeTxnID); err == nil {
		original = r
	}
	occasion := refundOccasion(providerRef, original)
	if len([]rune(occasion)) > maxRemarks {
		return providers.ChargeResult{}, providerErr(providers.Permanent, "invalid_request",
			fmt.Sprintf("transaction status: OriginatorConversationID %q is too long to be echoed", ledger.Clip(providerRef)), nil)
	}
	rep, err := c.d.post(ctx, statusPath, statusRequest{Initiator: cfg.Initiator, SecurityCredential: cfg.SecurityCredential,
		CommandID: "TransactionStatusQuery", OriginalConversationID: providerRef, PartyA: cfg.ShortCode, IdentifierType: "4",
		ResultURL: cfg.StatusURLs.Result, QueueTimeOutURL: cfg.StatusURLs.Timeout, Remarks: "Refund status", Occasion: occasion})
	if err != nil {
		return providers.ChargeResult{}, err
	}
	out, err := accepted(rep, "transaction status")
	if err != nil {
		return providers.ChargeResult{}, err
	}
	return providers.ChargeResult{ProviderRef: providerRef, Status: providers.StatusUnknown, Code: out.ResponseCode.String(),
		Reason: "status query sent; the answer comes by callback", At: cfg.Clock().UTC()}, nil
}

// accepted reads the acknowledgement of an asynchronous request.
func accepted(rep reply, what string) (asyncResponse, error) {
	if rep.status != http.StatusOK || rep.daraja.present() {
		return asyncResponse{}, classify(rep, what)
	}
	var out asyncResponse
	if err := json.Unmarshal(rep.body, &out); err != nil {
		return out, providerErr(providers.Ambiguous, "", what+": accepted with an unreadable answer", err)
	}
	switch code := out.ResponseCode.String(); code {
	case "0":
		return out, nil
	case "":
		return out, providerErr(providers.Ambiguous, "", what+": answer has no ResponseCode", nil)
	default:
		return out, providerErr(providers.Permanent, code, what+" not accepted: "+out.ResponseDescription.String(), nil)
	}
}

// refundOccasion is the Occasion of a status query about the reversal ref
// of the charge whose receipt is original (may be empty).
func refundOccasion(ref, original string) string {
	return occasionPrefix + ref + ":" + original
}

// parseRefundOccasion reads an Occasion written by refundOccasion.
func parseRefundOccasion(s string) (ref, original string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), occasionPrefix)
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return "", "", false
	}
	ref, original = rest[:i], rest[i+1:]
	if ref == "" {
		return "", "", false
	}
	if original != "" {
		r, err := receipt(original)
		if err != nil {
			return "", "", false
		}
		original = r
	}
	return ref, original, true
}
