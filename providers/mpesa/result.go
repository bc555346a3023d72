package mpesa

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// placeholderID matches the TransactionID Safaricom puts on results that
// carry no real receipt ("SKE0000000", "SB60000000").
var placeholderID = regexp.MustCompile(`^[A-Z0-9]{2,4}0{6,}$`)

// resultKinds are the kinds of the Result envelope.
var resultKinds = map[string]bool{KindB2C: true, KindReversal: true, KindTransactionStatus: true, KindAccountBalance: true}

// timeoutKinds maps the kind of a queue-timeout endpoint to its API's kind.
var timeoutKinds = map[string]string{KindReversalTimeout: KindReversal, KindTransactionStatusTimeout: KindTransactionStatus}

// result parses the Result envelope shared by B2C, reversal, transaction
// status and account balance results, and their queue timeout notices.
//
// A reversal result is also the verdict on the refund attempt whose
// reversal request had its OriginatorConversationID: ResultCode 0 succeeded
// (with the reversal's receipt and amount), any other code failed, and a
// timeout notice (one that arrived at the timeout endpoint, or says
// ResultType other than 0) is unknown: M-Pesa's queue gave up waiting, which
// says nothing of the money; a status query or later evidence settles it.
func (p *parser) result(n node, hint string) (providers.Evidence, error) {
	n, err := p.object(n)
	if err != nil {
		return providers.Evidence{}, err
	}
	code, err := p.resultCode(n, "ResultCode")
	if err != nil {
		return providers.Evidence{}, err
	}
	params, refData, err := p.resultLists(n)
	if err != nil {
		return providers.Evidence{}, err
	}
	api, atTimeout := hint, false
	if k, ok := timeoutKinds[hint]; ok {
		api, atTimeout = k, true
	}
	kind := resultKind(params.Items, refData.Items, api)
	if _, _, ours := ourOccasion(refData.Items); ours && kind == KindResult {
		// Only our refund status queries write such an Occasion.
		kind = KindTransactionStatus
	}
	// A success with its parameters is a result wherever it arrived.
	timedOut := code != "0" && (atTimeout || p.waiting(n))
	ev := providers.Evidence{Kind: kind, Ack: AckSuccess}
	if timedOut {
		for tk, k := range timeoutKinds {
			if k == kind {
				ev.Kind = tk
			}
		}
	}
	// ResultDesc only explains; an odd one is no reason to refuse a body.
	desc, _ := p.scalar(n, "ResultDesc")
	origin, err := p.scalar(n, "OriginatorConversationID")
	if err != nil && (kind == KindReversal || kind == KindResult) {
		// It names the refund attempt the result settles.
		return ev, err
	}
	// ResultDesc can quote the customer's number: masked before it is kept
	// as the attempt's reason.
	verdict := providers.AttemptOutcome{ProviderRef: origin.String(), Code: code, Reason: ledger.MaskMSISDNs(desc.String()), At: p.receivedAt}
	if code != "0" {
		return p.failedResult(ev, kind, timedOut, desc.String(), verdict, refData.Items), nil
	}
	pp := paramParser{p: p, items: params.Items, path: n.path + ".ResultParameters."}
	switch kind {
	case KindB2C:
		return p.b2c(ev, n, pp)
	case KindReversal:
		return p.reversal(ev, n, pp, verdict)
	case KindTransactionStatus:
		return p.transactionStatus(ev, n, pp, refData.Items)
	case KindAccountBalance:
		return ev, nil
	}
	return ev, p.fail(n.path+".ResultParameters", fmt.Errorf("%w on a successful result (ResultCode 0): cannot tell B2C, reversal or transaction status apart", errMissing))
}

// resultLists reads the result's ResultParameters (or ResultParameter) and
// its ReferenceData; a malformed ReferenceData reads as empty.
func (p *parser) resultLists(n node) (params, refData kvList, err error) {
	for _, name := range []string{"ResultParameters", "ResultParameter"} {
		if raw, ok := lookup(n.m, name); ok {
			if err := json.Unmarshal(raw, &params); err != nil {
				return kvList{}, kvList{}, p.fail(n.path+"."+name, err)
			}
			break
		}
	}
	if raw, ok := lookup(n.m, "ReferenceData"); ok {
		// Used to tell the API apart and to find our Occasion; a malformed
		// one is ignored.
		_ = json.Unmarshal(raw, &refData)
	}
	return params, refData, nil
}

// failedResult is the evidence of a result whose ResultCode is not 0: the
// outcome, if any, of the refund attempt it speaks of. desc is the
// ResultDesc as sent, verdict the attempt's outcome so far and ref the
// ReferenceData.
func (p *parser) failedResult(ev providers.Evidence, kind string, timedOut bool, desc string,
	verdict providers.AttemptOutcome, ref items) providers.Evidence {
	code := verdict.Code
	// A failed result moves no money and carries no amount: it is kept
	// as the stored callback. Trust ResultCode, never ResultDesc.
	switch {
	case kind == KindTransactionStatus:
		// The verdict on the query says nothing of the reversal it
		// asked about: that stays unknown.
		if ref, _, ours := ourOccasion(ref); ours {
			ev.Outcomes = []providers.AttemptOutcome{{ProviderRef: ref, Status: providers.StatusUnknown, Code: code,
				Reason: "transaction status query: " + desc, At: p.receivedAt}}
		}
	case (kind == KindReversal || kind == KindResult) && verdict.ProviderRef != "":
		// Only our reversal requests are known by an
		// OriginatorConversationID, so a result of unknown API that
		// names one may be a reversal's. Only a result known to be a
		// reversal's fails the attempt: one whose API nothing tells
		// (a bare body in a file) could be a timeout notice, so it
		// leaves the attempt unknown.
		verdict.Status = providers.StatusFailed
		if timedOut || kind == KindResult {
			verdict.Status = providers.StatusUnknown
		}
		ev.Outcomes = []providers.AttemptOutcome{verdict}
	}
	return ev
}

// waiting reports a ResultType other than 0, which Daraja's queue timeout
// notices carry (1).
func (p *parser) waiting(n node) bool {
	f, err := p.scalar(n, "ResultType")
	return err == nil && f.String() != "" && f.String() != "0"
}

// ourOccasion finds the Occasion a refund status query wrote in the
// result's reference data.
func ourOccasion(ref items) (providerRef, original string, ok bool) {
	for _, f := range ref.all("Occasion") {
		if providerRef, original, ok = parseRefundOccasion(f.String()); ok {
			return providerRef, original, true
		}
	}
	return "", "", false
}

// resultKind tells the API of a result by its parameters, then by the queue
// timeout URL in its reference data, then by the endpoint's word.
func resultKind(params, ref items, hint string) string {
	has := func(names ...string) bool {
		for _, name := range names {
			if _, found, _ := params.get(name); found {
				return true
			}
		}
		return false
	}
	switch {
	case has("OriginalTransactionID", "TransCompletedTime"):
		return KindReversal
	case has("TransactionReceipt", "TransactionAmount", "ReceiverPartyPublicName", "TransactionCompletedDateTime",
		"B2CUtilityAccountAvailableFunds"):
		return KindB2C
	case has("ReceiptNo", "TransactionStatus", "FinalisedTime", "DebitPartyName", "CreditPartyName"):
		return KindTransactionStatus
	case has("AccountBalance", "BOCompletedTime"):
		return KindAccountBalance
	}
	if u, _, _ := ref.get("QueueTimeoutURL"); u.String() != "" {
		s := strings.ToLower(u.String())
		switch {
		case strings.Contains(s, "reversal"):
			return KindReversal
		case strings.Contains(s, "b2c"):
			return KindB2C
		case strings.Contains(s, "transactionstatus"), strings.Contains(s, "transstat"):
			return KindTransactionStatus
		case strings.Contains(s, "accountbalance"):
			return KindAccountBalance
		}
	}
	if resultKinds[hint] {
		return hint
	}
	return KindResult
}

// paramParser reads ResultParameters by key.
type paramParser struct {
	p     *parser
	items items
	path  string
}

func (pp paramParser) get(name string) (flex, error) {
	f, _, err := pp.items.get(name)
	if err != nil {
		return f, pp.p.fail(pp.path+name, err)
	}
	return f, nil
}

func (pp paramParser) required(name string) (string, error) {
	f, err := pp.get(name)
	if err != nil {
		return "", err
	}
	if f.String() == "" {
		return "", pp.p.fail(pp.path+name, errMissing)
	}
	return f.String(), nil
}

// first returns the first of names that has a value, and the name it used.
func (pp paramParser) first(names ...string) (string, string, error) {
	for _, name := range names {
		f, err := pp.get(name)
		if err != nil {
			return "", name, err
		}
		if f.String() != "" {
			return f.String(), name, nil
		}
	}
	return "", names[0], pp.p.fail(pp.path+names[0], errMissing)
}

func (pp paramParser) receipt(names ...string) (string, error) {
	s, name, err := pp.first(names...)
	if err != nil {
		return "", err
	}
	r, err := receipt(s)
	if err != nil {
		return "", pp.p.fail(pp.path+name, err)
	}
	return r, nil
}

func (pp paramParser) amount(name string) (ledger.ProviderTxn, error) {
	f, err := pp.get(name)
	if err != nil {
		return ledger.ProviderTxn{}, err
	}
	a, err := amount(f)
	if err != nil {
		return ledger.ProviderTxn{}, pp.p.fail(pp.path+name, err)
	}
	return ledger.ProviderTxn{Amount: a}, nil
}

// envelopeID returns the result's TransactionID unless it is a placeholder.
func (p *parser) envelopeID(n node) string {
	f, err := p.scalar(n, "TransactionID")
	if err != nil {
		return ""
	}
	id := strings.ToUpper(f.String())
	if placeholderID.MatchString(id) {
		return ""
	}
	return id
}

// resultRef is the source ref of a result: its ConversationID, else the
// transaction's id.
func (p *parser) resultRef(n node, id string) string {
	for _, name := range []string{"ConversationID", "OriginatorConversationID"} {
		if f, err := p.scalar(n, name); err == nil && f.String() != "" {
			return "result:" + f.String()
		}
	}
	return "result:" + id
}

func (p *parser) b2c(ev providers.Evidence, n node, pp paramParser) (providers.Evidence, error) {
	id, err := pp.receipt("TransactionReceipt")
	if err != nil {
		if env := p.envelopeID(n); env == "" {
			return ev, err
		} else if id, err = receipt(env); err != nil {
			return ev, p.fail(n.path+".TransactionID", err)
		}
	}
	t, err := pp.amount("TransactionAmount")
	if err != nil {
		return ev, err
	}
	when, err := pp.required("TransactionCompletedDateTime")
	if err != nil {
		return ev, err
	}
	if t.OccurredAt, err = parseB2CTime(when); err != nil {
		return ev, p.fail(pp.path+"TransactionCompletedDateTime", err)
	}
	party, err := pp.get("ReceiverPartyPublicName")
	if err != nil {
		return ev, err
	}
	origin, err := p.scalar(n, "OriginatorConversationID")
	if err != nil {
		return ev, err
	}
	t.ID, t.Type, t.Status = id, ledger.TxnPayout, ledger.TxnSucceeded
	t.ProviderRef = origin.String()
	t.Counterparty = partyCounterparty(party.String())
	s, err := p.sighting(t, KindB2C, p.resultRef(n, t.ID))
	if err != nil {
		return ev, err
	}
	ev.Sightings = []providers.Sighting{s}
	return ev, nil
}

func (p *parser) reversal(ev providers.Evidence, n node, pp paramParser, verdict providers.AttemptOutcome) (providers.Evidence, error) {
	idText, err := p.required(n, "TransactionID")
	if err != nil {
		return ev, err
	}
	id, err := receipt(idText)
	if err != nil {
		return ev, p.fail(n.path+".TransactionID", err)
	}
	if placeholderID.MatchString(id) {
		return ev, p.fail(n.path+".TransactionID", fmt.Errorf("%q is a placeholder, not a receipt", id))
	}
	original, err := pp.receipt("OriginalTransactionID")
	if err != nil {
		return ev, err
	}
	t, err := pp.amount("Amount")
	if err != nil {
		return ev, err
	}
	when, err := pp.required("TransCompletedTime")
	if err != nil {
		return ev, err
	}
	if t.OccurredAt, err = parseCompact(when); err != nil {
		return ev, p.fail(pp.path+"TransCompletedTime", err)
	}
	party, err := pp.get("CreditPartyPublicName")
	if err != nil {
		return ev, err
	}
	t.ID, t.Type, t.Status, t.LinkedID = id, ledger.TxnReversal, ledger.TxnSucceeded, original
	// The request's id, which the refund attempt recorded, links the
	// reversal to its refund intent.
	t.ProviderRef = verdict.ProviderRef
	t.Counterparty = partyCounterparty(party.String())
	s, err := p.sighting(t, KindReversal, p.resultRef(n, t.ID))
	if err != nil {
		return ev, err
	}
	ev.Sightings = []providers.Sighting{s}
	if verdict.ProviderRef != "" {
		verdict.Status, verdict.TxnID, verdict.Amount, verdict.At = providers.StatusSucceeded, t.ID, t.Amount, t.OccurredAt
		ev.Outcomes = []providers.AttemptOutcome{verdict}
	}
	return ev, nil
}

// statusOf maps a TransactionStatus (result) or Transaction Status
// (statement) value. A reversed transaction did take place; its reversal is
// a transaction of its own that nets it.
func statusOf(s string) (ledger.TxnStatus, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "completed", "reversed", "success", "successful":
		return ledger.TxnSucceeded, true
	case "failed", "cancelled", "canceled", "declined", "expired":
		return ledger.TxnFailed, true
	case "pending", "attempted", "authorized", "authorised", "processing":
		return ledger.TxnPending, true
	}
	return "", false
}

// typeOfReason classifies a transaction by its reason type (transaction
// status ReasonType, statement Reason Type or Details).
func typeOfReason(reason string, paidIn bool) ledger.TxnType {
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "reversal"):
		return ledger.TxnReversal
	case strings.Contains(r, "charge") || strings.Contains(r, "fee for"):
		return ledger.TxnFee
	case strings.Contains(r, "business payment to customer"), strings.Contains(r, "b2c"),
		strings.Contains(r, "salary payment"), strings.Contains(r, "promotion payment"),
		strings.Contains(r, "to bank"), strings.Contains(r, "settle"), strings.Contains(r, "withdraw"):
		return ledger.TxnPayout
	}
	if paidIn {
		return ledger.TxnCharge
	}
	return ledger.TxnPayout
}

// transactionStatus reads a Transaction Status result. When its Occasion
// is one a refund status query wrote, the transaction is that refund
// attempt's reversal: it is typed a reversal of the charge the Occasion
// names, carries the attempt's reference, and its status is the verdict on
// the attempt (Completed succeeded, Failed and the like failed, Pending
// pending).
func (p *parser) transactionStatus(ev providers.Evidence, n node, pp paramParser, ref items) (providers.Evidence, error) {
	statusText, err := pp.required("TransactionStatus")
	if err != nil {
		return ev, err
	}
	status, ok := statusOf(statusText)
	if !ok {
		return ev, p.fail(pp.path+"TransactionStatus", fmt.Errorf("%q is not a known status (want Completed, Failed, Reversed or Pending)", statusText))
	}
	attempt, original, ours := ourOccasion(ref)
	verdict := providers.AttemptOutcome{ProviderRef: attempt, Code: statusText, Reason: "transaction status: " + statusText, At: p.receivedAt}
	switch status {
	case ledger.TxnSucceeded:
		verdict.Status = providers.StatusSucceeded
	case ledger.TxnFailed:
		verdict.Status = providers.StatusFailed
	default:
		verdict.Status = providers.StatusPending
	}
	t, err := p.statusTxn(n, pp)
	if err != nil {
		if ours && verdict.Status != providers.StatusSucceeded {
			// A reversal that failed or is still pending may have no
			// receipt or amount to show; its verdict stands on its own.
			ev.Outcomes = []providers.AttemptOutcome{verdict}
			return ev, nil
		}
		return ev, err
	}
	t.Status = status
	if ours && (strings.EqualFold(strings.TrimSpace(statusText), "reversed") || strings.EqualFold(t.ID, original)) {
		// The answer is about the charge itself (its receipt), or says the
		// reversal was itself undone: it says nothing certain about our
		// reversal. No verdict; the transaction is kept as it stands.
		ours = false
	}
	if ours {
		t.Type, t.ProviderRef = ledger.TxnReversal, attempt
		if original != "" {
			t.LinkedID = original
		}
	}
	s, err := p.sighting(t, KindTransactionStatus, p.resultRef(n, t.ID))
	if err != nil {
		return ev, err
	}
	ev.Sightings = []providers.Sighting{s}
	if ours {
		verdict.At = t.OccurredAt
		if verdict.Status == providers.StatusSucceeded {
			verdict.TxnID, verdict.Amount = t.ID, t.Amount
		}
		ev.Outcomes = []providers.AttemptOutcome{verdict}
	}
	return ev, nil
}

// statusTxn reads the queried transaction of a Transaction Status result.
func (p *parser) statusTxn(n node, pp paramParser) (ledger.ProviderTxn, error) {
	id, err := pp.receipt("ReceiptNo")
	if err != nil {
		if env := p.envelopeID(n); env == "" {
			return ledger.ProviderTxn{}, err
		} else if id, err = receipt(env); err != nil {
			return ledger.ProviderTxn{}, p.fail(n.path+".TransactionID", err)
		}
	}
	t, err := pp.amount("Amount")
	if err != nil {
		return t, err
	}
	when, name, err := pp.first("FinalisedTime", "InitiatedTime")
	if err != nil {
		return t, err
	}
	if t.OccurredAt, err = parseCompact(when); err != nil {
		return t, p.fail(pp.path+name, err)
	}
	reason, err := pp.get("ReasonType")
	if err != nil {
		return t, err
	}
	t.ID, t.Type = id, typeOfReason(reason.String(), true)
	// The customer is whichever party is a phone number; the official
	// sample names DebitPartyName twice.
	parties := append(pp.items.all("DebitPartyName"), pp.items.all("CreditPartyName")...)
	for _, party := range parties {
		if pid, _ := splitParty(party.String()); pid != "" && looksLikePhone(pid) {
			t.Counterparty = partyCounterparty(party.String())
			break
		}
	}
	return t, nil
}
