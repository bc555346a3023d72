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

// ReversalResult is what a reversal result reports.
type ReversalResult struct {
	OriginatorConversationID string
	ConversationID           string
	// ResultCode "0" is success; see the Reversal* constants.
	ResultCode string
	ResultDesc string
	// Receipt is the reversal's receipt, Original the reversed payment's;
	// Amount (whole shillings as text) is written as a JSON number.
	Receipt  string
	Original string
	Amount   string
	At       time.Time
	// Party is the customer credited, "<msisdn> - <NAME>".
	Party string
}

// ReversalResultBody renders the body Daraja posts to a reversal's
// ResultURL in the documented shape: ResultParameters only on success, a
// placeholder TransactionID on failure, the queue timeout URL as reference
// data.
func ReversalResultBody(r ReversalResult) []byte {
	desc := r.ResultDesc
	if desc == "" {
		desc = DescribeReversal(r.ResultCode)
	}
	res := map[string]any{"ResultType": 0, "ResultCode": resultCodeValue(r.ResultCode), "ResultDesc": desc,
		"OriginatorConversationID": r.OriginatorConversationID, "ConversationID": r.ConversationID,
		"TransactionID": placeholder(r.Receipt),
		"ReferenceData": map[string]any{"ReferenceItem": map[string]string{"Key": "QueueTimeoutURL",
			"Value": "https://internalsandbox.safaricom.co.ke/mpesa/reversalresults/v1/submit"}}}
	if r.ResultCode == ReversalSuccess {
		res["TransactionID"] = r.Receipt
		res["ResultParameters"] = map[string]any{"ResultParameter": []any{
			map[string]any{"Key": "DebitAccountBalance", "Value": "Utility Account|KES|7722179.62|7722179.62|0.00|0.00"},
			map[string]any{"Key": "Amount", "Value": json.Number(r.Amount)},
			map[string]any{"Key": "TransCompletedTime", "Value": json.Number(compact(r.At))},
			map[string]any{"Key": "OriginalTransactionID", "Value": r.Original},
			map[string]any{"Key": "Charge", "Value": json.Number("0.00")},
			map[string]any{"Key": "CreditPartyPublicName", "Value": r.Party},
			map[string]any{"Key": "DebitPartyPublicName", "Value": "600992 - Fake Org"},
		}}
	}
	return mustJSON(map[string]any{"Result": res})
}

// ReversalTimeoutBody renders the notice Daraja posts to a reversal's
// QueueTimeOutURL when the request timed out in M-Pesa's queue, in the shape
// SDKs model it (ResultType 1, no parameters).
func ReversalTimeoutBody(originatorConversationID, conversationID string) []byte {
	return mustJSON(map[string]any{"Result": map[string]any{"ResultType": 1, "ResultCode": "1",
		"ResultDesc": "The service request timed out.", "OriginatorConversationID": originatorConversationID,
		"ConversationID": conversationID}})
}

// StatusResult is what a Transaction Status result reports.
type StatusResult struct {
	OriginatorConversationID string
	ConversationID           string
	// ResultCode "0" answers the query; others (InitiatorInvalid,
	// StatusNotFound) carry no parameters.
	ResultCode string
	// Occasion is the query's, echoed in the reference data.
	Occasion string
	// Receipt, Status (Completed, Failed, Pending, Reversed), Amount and
	// ReasonType describe the queried transaction; At is when it finished.
	Receipt    string
	Status     string
	Amount     string
	ReasonType string
	At         time.Time
	// QueriedOriginatorConversationID is the queried transaction's request
	// id, when it has one.
	QueriedOriginatorConversationID string
}

// StatusResultBody renders the body Daraja posts to a Transaction Status
// query's ResultURL, in the production shape (numbers for times and
// amounts, the Occasion echoed).
func StatusResultBody(r StatusResult) []byte {
	desc := DescribeReversal(r.ResultCode)
	res := map[string]any{"ResultType": 0, "ResultCode": resultCodeValue(r.ResultCode), "ResultDesc": desc,
		"OriginatorConversationID": r.OriginatorConversationID, "ConversationID": r.ConversationID,
		"TransactionID": placeholder(r.Receipt),
		"ReferenceData": map[string]any{"ReferenceItem": map[string]string{"Key": "Occasion", "Value": r.Occasion}}}
	if r.ResultCode == "0" {
		params := []any{
			map[string]any{"Key": "DebitPartyName", "Value": "600992 - Fake Org"},
			map[string]any{"Key": "CreditPartyName", "Value": "254700000000 - CUSTOMER"},
		}
		if r.QueriedOriginatorConversationID != "" {
			params = append(params, map[string]any{"Key": "OriginatorConversationID", "Value": r.QueriedOriginatorConversationID})
		}
		params = append(params,
			map[string]any{"Key": "InitiatedTime", "Value": json.Number(compact(r.At))},
			map[string]any{"Key": "DebitAccountType", "Value": "Utility Account"},
			map[string]any{"Key": "TransactionReason"},
			map[string]any{"Key": "ReasonType", "Value": r.ReasonType},
			map[string]any{"Key": "TransactionStatus", "Value": r.Status},
			map[string]any{"Key": "FinalisedTime", "Value": json.Number(compact(r.At))},
			map[string]any{"Key": "Amount", "Value": json.Number(r.Amount)},
			map[string]any{"Key": "ReceiptNo", "Value": r.Receipt})
		res["ResultParameters"] = map[string]any{"ResultParameter": params}
	}
	return mustJSON(map[string]any{"Result": res})
}

// resultCodeValue writes a numeric code as a JSON number and any other
// ("R000002") as a string, as Daraja does.
func resultCodeValue(code string) any {
	if code != "" && strings.Trim(code, "0123456789") == "" {
		return json.Number(code)
	}
	return code
}

// placeholder is the TransactionID Daraja puts on results without a real
// receipt: the receipt's first three characters and zeros.
func placeholder(receipt string) string {
	if len(receipt) < 3 {
		return "SKE0000000"
	}
	return receipt[:3] + "0000000"
}
