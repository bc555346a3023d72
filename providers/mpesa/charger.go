package mpesa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

var oneShilling = decimal.NewFromInt(1)

// maxTransactionDesc is the longest TransactionDesc Daraja accepts.
const maxTransactionDesc = 13

// Charger charges by STK push (M-Pesa Express) and asks for the outcome of
// a push by STK push query. M-Pesa honours no idempotency key, so it does not
// implement providers.KeyHonourer: the caller must learn the outcome of an
// attempt before pushing again.
type Charger struct {
	d *daraja
}

var (
	_ providers.Charger       = (*Charger)(nil)
	_ providers.StatusQuerier = (*Charger)(nil)
)

// NewCharger checks cfg and returns a charger.
func NewCharger(cfg Config) (*Charger, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.PassKey == "" {
		return nil, errors.New("mpesa: config: PassKey is required for STK push")
	}
	if cfg.CallbackURL == "" {
		return nil, errors.New("mpesa: config: CallbackURL is required for STK push")
	}
	return &Charger{d: &daraja{cfg: cfg}}, nil
}

type stkPushRequest struct {
	BusinessShortCode string      `json:"BusinessShortCode"`
	Password          string      `json:"Password"`
	Timestamp         string      `json:"Timestamp"`
	TransactionType   string      `json:"TransactionType"`
	Amount            json.Number `json:"Amount"`
	PartyA            string      `json:"PartyA"`
	PartyB            string      `json:"PartyB"`
	PhoneNumber       string      `json:"PhoneNumber"`
	CallBackURL       string      `json:"CallBackURL"`
	AccountReference  string      `json:"AccountReference"`
	TransactionDesc   string      `json:"TransactionDesc"`
}

type stkPushResponse struct {
	MerchantRequestID   flex `json:"MerchantRequestID"`
	CheckoutRequestID   flex `json:"CheckoutRequestID"`
	ResponseCode        flex `json:"ResponseCode"`
	ResponseDescription flex `json:"ResponseDescription"`
	CustomerMessage     flex `json:"CustomerMessage"`
}

// Charge pushes an STK prompt to the customer's phone. Success means only
// that the prompt was accepted: the result is pending, with the
// CheckoutRequestID as ProviderRef; the outcome comes by callback or by
// QueryStatus. A request that cannot be valid (not KES, not whole
// shillings, not a Kenyan mobile number, no reference or one longer than 12
// characters) fails as Permanent before anything is sent.
func (c *Charger) Charge(ctx context.Context, req providers.ChargeRequest) (providers.ChargeResult, error) {
	cfg := c.d.cfg
	body, err := c.pushRequest(req)
	if err != nil {
		return providers.ChargeResult{}, err
	}
	rep, err := c.d.post(ctx, "/mpesa/stkpush/v1/processrequest", body)
	if err != nil {
		return providers.ChargeResult{}, err
	}
	if rep.status != http.StatusOK || rep.daraja.present() {
		return providers.ChargeResult{}, classify(rep, "stk push")
	}
	var out stkPushResponse
	if err := json.Unmarshal(rep.body, &out); err != nil {
		return providers.ChargeResult{}, providerErr(providers.Ambiguous, "", "stk push: accepted with an unreadable answer", err)
	}
	code := out.ResponseCode.String()
	if code != "0" {
		if code == "" {
			return providers.ChargeResult{}, providerErr(providers.Ambiguous, "", "stk push: answer has no ResponseCode", nil)
		}
		return providers.ChargeResult{}, providerErr(providers.Permanent, code, "stk push not accepted: "+out.ResponseDescription.String(), nil)
	}
	ref := out.CheckoutRequestID.String()
	if ref == "" {
		return providers.ChargeResult{}, providerErr(providers.Ambiguous, "", "stk push: accepted without a CheckoutRequestID", nil)
	}
	return providers.ChargeResult{ProviderRef: ref, Status: providers.StatusPending, Code: code,
		Reason: out.CustomerMessage.String(), At: cfg.Clock().UTC()}, nil
}

// CheckRequest says whether req could ever be pushed: the checks Charge makes
// before sending anything.
func (c *Charger) CheckRequest(req providers.ChargeRequest) error {
	_, err := c.pushRequest(req)
	return err
}

func (c *Charger) pushRequest(req providers.ChargeRequest) (stkPushRequest, error) {
	cfg := c.d.cfg
	invalid := func(field string, err error) error {
		return &providers.Error{Provider: Provider, Kind: providers.Permanent, Code: "invalid_request",
			Message: fmt.Sprintf("stk push: %s: %v", field, err), Err: &ledger.FieldError{Field: field, Err: err}}
	}
	if req.Amount.Currency != Currency {
		return stkPushRequest{}, invalid("amount", fmt.Errorf("currency %q, M-Pesa charges only %s", req.Amount.Currency, Currency))
	}
	if !req.Amount.Value.IsInteger() || req.Amount.Value.LessThan(oneShilling) {
		return stkPushRequest{}, invalid("amount", fmt.Errorf("%s is not a whole number of shillings of at least 1", req.Amount.Text()))
	}
	phone, err := normalizePhone(req.Customer)
	if err != nil {
		return stkPushRequest{}, invalid("customer", err)
	}
	ref := strings.TrimSpace(req.Reference)
	if ref == "" {
		return stkPushRequest{}, invalid("reference", errors.New("is empty"))
	}
	if len(ref) > ledger.MaxReferenceLen {
		return stkPushRequest{}, invalid("reference", fmt.Errorf("%q is longer than %d characters", ref, ledger.MaxReferenceLen))
	}
	desc := strings.TrimSpace(req.Description)
	if desc == "" {
		desc = ref
	}
	if r := []rune(desc); len(r) > maxTransactionDesc {
		desc = string(r[:maxTransactionDesc])
	}
	ts := cfg.Clock().In(EAT).Format(compactLayout)
	return stkPushRequest{BusinessShortCode: cfg.ShortCode, Password: password(cfg.ShortCode, cfg.PassKey, ts), Timestamp: ts,
		TransactionType: cfg.TransactionType, Amount: json.Number(req.Amount.Value.StringFixed(0)), PartyA: phone,
		PartyB: cfg.PartyB, PhoneNumber: phone, CallBackURL: cfg.CallbackURL, AccountReference: ref, TransactionDesc: desc}, nil
}

type stkQueryRequest struct {
	BusinessShortCode string `json:"BusinessShortCode"`
	Password          string `json:"Password"`
	Timestamp         string `json:"Timestamp"`
	CheckoutRequestID string `json:"CheckoutRequestID"`
}

type stkQueryResponse struct {
	ResponseCode        flex `json:"ResponseCode"`
	ResponseDescription flex `json:"ResponseDescription"`
	MerchantRequestID   flex `json:"MerchantRequestID"`
	CheckoutRequestID   flex `json:"CheckoutRequestID"`
	ResultCode          flex `json:"ResultCode"`
	ResultDesc          flex `json:"ResultDesc"`
}

// stillProcessing reports whether Daraja says the prompt is still open.
func stillProcessing(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "being processed") || strings.Contains(m, "under processing") ||
		strings.Contains(m, "still processing")
}

// QueryStatus asks for the outcome of the STK push whose CheckoutRequestID
// is providerRef. ResultCode 0 is succeeded, any other code failed (with the
// code and description); a prompt still on the customer's screen ("The
// transaction is being processed") is pending, not failed. When the outcome
// cannot be learned the error says why: Retryable (rate limited, not sent),
// Permanent (Daraja rejects the reference) or Ambiguous.
func (c *Charger) QueryStatus(ctx context.Context, providerRef string) (providers.ChargeResult, error) {
	cfg := c.d.cfg
	providerRef = strings.TrimSpace(providerRef)
	if providerRef == "" {
		return providers.ChargeResult{}, providerErr(providers.Permanent, "invalid_request", "stk query: empty CheckoutRequestID", nil)
	}
	ts := cfg.Clock().In(EAT).Format(compactLayout)
	rep, err := c.d.post(ctx, "/mpesa/stkpushquery/v1/query", stkQueryRequest{BusinessShortCode: cfg.ShortCode,
		Password: password(cfg.ShortCode, cfg.PassKey, ts), Timestamp: ts, CheckoutRequestID: providerRef})
	if err != nil {
		return providers.ChargeResult{}, err
	}
	now := cfg.Clock().UTC()
	if rep.status != http.StatusOK || rep.daraja.present() {
		if stillProcessing(rep.daraja.ErrorMessage) {
			return providers.ChargeResult{ProviderRef: providerRef, Status: providers.StatusPending,
				Code: rep.daraja.ErrorCode, Reason: rep.daraja.ErrorMessage, At: now}, nil
		}
		return providers.ChargeResult{}, classify(rep, "stk query")
	}
	var out stkQueryResponse
	if err := json.Unmarshal(rep.body, &out); err != nil {
		return providers.ChargeResult{}, providerErr(providers.Ambiguous, "", "stk query: unreadable answer", err)
	}
	code, desc := out.ResultCode.String(), out.ResultDesc.String()
	res := providers.ChargeResult{ProviderRef: providerRef, Code: code, Reason: desc, At: now}
	switch {
	case stillProcessing(desc) || code == "4999":
		res.Status = providers.StatusPending
	case code == "0":
		res.Status = providers.StatusSucceeded
	case code != "":
		res.Status = providers.StatusFailed
	default:
		return providers.ChargeResult{}, providerErr(providers.Ambiguous, out.ResponseCode.String(),
			"stk query: answer has no ResultCode: "+out.ResponseDescription.String(), nil)
	}
	return res, nil
}
