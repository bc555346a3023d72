package mpesafake

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// EAT is the zone of every Daraja timestamp. It is Safaricom's side, kept
// apart from mpesa.EAT on purpose: the fake must not share the code it tests
// (and package mpesa's tests import the fake).
var EAT = time.FixedZone("EAT", 3*3600)

// STKResult is what an STK callback reports.
type STKResult struct {
	MerchantRequestID string
	CheckoutRequestID string
	// ResultCode 0 is success; see the Result* constants.
	ResultCode int
	ResultDesc string
	// Amount is the whole-shilling amount as text ("1" or "1.00"); it is
	// written as a JSON number with exactly these digits.
	Amount  string
	Receipt string
	At      time.Time
	// Phone is written as a JSON number (254708374149).
	Phone string
	// WithBalance adds the valueless {"Name":"Balance"} item production
	// sends between the receipt and the date.
	WithBalance bool
}

// Result codes of STK callbacks.
const (
	ResultSuccess           = 0
	ResultInsufficientFunds = 1
	ResultCancelled         = 1032
	ResultUnreachable       = 1037
	ResultExpired           = 1019
)

// resultDesc are the documented descriptions of result codes.
var resultDesc = map[int]string{
	ResultSuccess:           "The service request is processed successfully.",
	ResultInsufficientFunds: "The balance is insufficient for the transaction.",
	ResultCancelled:         "Request cancelled by user",
	ResultUnreachable:       "DS timeout user cannot be reached",
	ResultExpired:           "Transaction has expired",
}

// Describe returns the documented description of an STK result code.
func Describe(code int) string {
	if d, ok := resultDesc[code]; ok {
		return d
	}
	return fmt.Sprintf("Result code %d", code)
}

func compact(t time.Time) string { return t.In(EAT).Format("20060102150405") }

// STKCallbackBody renders the body Daraja posts to the CallBackURL, in the
// documented shape: CallbackMetadata only on success, numbers for Amount,
// TransactionDate and PhoneNumber.
func STKCallbackBody(r STKResult) []byte {
	desc := r.ResultDesc
	if desc == "" {
		desc = Describe(r.ResultCode)
	}
	cb := map[string]any{
		"MerchantRequestID": r.MerchantRequestID,
		"CheckoutRequestID": r.CheckoutRequestID,
		"ResultCode":        r.ResultCode,
		"ResultDesc":        desc,
	}
	if r.ResultCode == ResultSuccess {
		items := []any{
			map[string]any{"Name": "Amount", "Value": json.Number(r.Amount)},
			map[string]any{"Name": "MpesaReceiptNumber", "Value": r.Receipt},
		}
		if r.WithBalance {
			items = append(items, map[string]any{"Name": "Balance"})
		}
		items = append(items,
			map[string]any{"Name": "TransactionDate", "Value": json.Number(compact(r.At))},
			map[string]any{"Name": "PhoneNumber", "Value": json.Number(r.Phone)})
		cb["CallbackMetadata"] = map[string]any{"Item": items}
	}
	return mustJSON(map[string]any{"Body": map[string]any{"stkCallback": cb}})
}

// C2BPayment is a customer payment to a PayBill or Till.
type C2BPayment struct {
	// TransactionType is "Pay Bill" (default) or "Buy Goods".
	TransactionType string
	TransID         string
	At              time.Time
	// Amount is the amount as text ("1.00"), written as a JSON string as
	// production does.
	Amount    string
	ShortCode string
	BillRef   string
	// MSISDN as the confirmation carries it: masked ("2547 ***** 845"),
	// hashed, or plain.
	MSISDN    string
	FirstName string
	// OrgAccountBalance is blank on validation.
	OrgAccountBalance string
}

// C2BBody renders a C2B validation or confirmation body (they share the
// shape), all strings, MiddleName and LastName absent as in production.
func C2BBody(p C2BPayment) []byte {
	tt := p.TransactionType
	if tt == "" {
		tt = "Pay Bill"
	}
	return mustJSON(struct {
		TransactionType   string `json:"TransactionType"`
		TransID           string `json:"TransID"`
		TransTime         string `json:"TransTime"`
		TransAmount       string `json:"TransAmount"`
		BusinessShortCode string `json:"BusinessShortCode"`
		BillRefNumber     string `json:"BillRefNumber"`
		InvoiceNumber     string `json:"InvoiceNumber"`
		OrgAccountBalance string `json:"OrgAccountBalance"`
		ThirdPartyTransID string `json:"ThirdPartyTransID"`
		MSISDN            string `json:"MSISDN"`
		FirstName         string `json:"FirstName"`
	}{tt, p.TransID, compact(p.At), p.Amount, p.ShortCode, p.BillRef, "", p.OrgAccountBalance, "", p.MSISDN, p.FirstName})
}

// MaskMSISDN masks a number the way C2B confirmations now do:
// 254712340845 -> "2547 ***** 845".
func MaskMSISDN(msisdn string) string {
	if len(msisdn) < 8 {
		return strings.Repeat("*", len(msisdn))
	}
	return msisdn[:4] + " ***** " + msisdn[len(msisdn)-3:]
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
