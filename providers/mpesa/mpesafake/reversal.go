package mpesafake

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Daraja paths of the refund APIs.
const (
	PathReversal          = "/mpesa/reversal/v1/request"
	PathTransactionStatus = "/mpesa/transactionstatus/v1/query"
)

// Sandbox initiator credentials, the defaults of Config.
const (
	SandboxInitiator          = "testapi"
	SandboxSecurityCredential = "fake-security-credential"
)

// Reversal result codes.
const (
	ReversalSuccess         = "0"
	ReversalAlreadyReversed = "R000001"
	ReversalInvalidOriginal = "R000002"
	// ReversalNotPermitted: the initiator lacks the Org Reversals Initiator
	// role.
	ReversalNotPermitted = "21"
	// InitiatorInvalid: wrong initiator name or security credential.
	InitiatorInvalid = "2001"
	// StatusNotFound answers a status query about a transaction the fake
	// does not know. Safaricom's own code for this is not documented, so
	// the fake uses an obviously made-up one.
	StatusNotFound = "fake_not_found"
)

var reversalDesc = map[string]string{
	ReversalSuccess:         "The service request is processed successfully.",
	ReversalAlreadyReversed: "The transaction has already been reversed.",
	ReversalInvalidOriginal: "The OriginalTransactionID is invalid.",
	ReversalNotPermitted:    "Initiator is not allowed to initiate this request.",
	InitiatorInvalid:        "The initiator information is invalid.",
	StatusNotFound:          "No transaction found for the query.",
}

// DescribeReversal returns the description of a reversal result code.
func DescribeReversal(code string) string {
	if d, ok := reversalDesc[code]; ok {
		return d
	}
	return "Result code " + code
}

// ReversalOutcome is how M-Pesa answers a reversal request.
type ReversalOutcome struct {
	// ResultCode forces a verdict ("0", ReversalNotPermitted...). Empty:
	// the books decide: success, unless the original receipt is unknown
	// (ReversalInvalidOriginal), already reversed (ReversalAlreadyReversed)
	// or the credentials are wrong (InitiatorInvalid).
	ResultCode string
	// Callback says how often the result reaches the ResultURL:
	// DeliverOnce, DeliverTwice (a duplicate delivery), DeliverNever (no
	// callback ever: only a status query can tell).
	Callback Delivery
	// TimedOut first posts a queue timeout notice to the QueueTimeOutURL.
	// With DeliverNever the notice is all that arrives, while the verdict
	// (and the money) is as ResultCode says.
	TimedOut bool
}

// Reversal is an accepted reversal request.
type Reversal struct {
	OriginatorConversationID string
	ConversationID           string
	// Original is the receipt of the payment to reverse.
	Original  string
	Amount    string
	Initiator string
	// CredentialOK says the initiator and security credential were right.
	CredentialOK bool
	ResultURL    string
	TimeoutURL   string
	Remarks      string
	Occasion     string
	At           time.Time
	Settled      bool
	SettledAt    time.Time
	Outcome      ReversalOutcome
	ResultCode   string
	// Receipt is the reversal's own receipt, shown on success and to
	// status queries.
	Receipt string
	// Delivered counts result deliveries; TimeoutsDelivered timeout notices.
	Delivered         int
	TimeoutsDelivered int
}

// StatusQuery is an accepted Transaction Status query.
type StatusQuery struct {
	OriginatorConversationID string
	ConversationID           string
	TransactionID            string
	OriginalConversationID   string
	Occasion                 string
	ResultURL                string
	// Delivered counts result deliveries.
	Delivered int
}

// Reversals returns the accepted reversal requests in order.
func (s *Server) Reversals() []Reversal {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Reversal, 0, len(s.reversalOrder))
	for _, id := range s.reversalOrder {
		out = append(out, *s.reversals[id])
	}
	return out
}

// StatusQueries returns the accepted status queries in order.
func (s *Server) StatusQueries() []StatusQuery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StatusQuery, len(s.statusQueries))
	for i, q := range s.statusQueries {
		out[i] = *q
	}
	return out
}

// conversationIDs draws a request's two ids.
func (s *Server) conversationIDs(now time.Time) (originator, conversation string) {
	s.seq++
	originator = fmt.Sprintf("%04x-%04x-%04x-%x%d", s.rng.IntN(1<<16), s.rng.IntN(1<<16), s.rng.IntN(1<<16), s.rng.Uint32(), s.seq)
	conversation = fmt.Sprintf("AG_%s_%016x", now.In(EAT).Format("20060102"), s.rng.Uint64())
	return originator, conversation
}

func (s *Server) credentialOK(body map[string]json.RawMessage) bool {
	return text(body, "Initiator") == s.cfg.Initiator && text(body, "SecurityCredential") == s.cfg.SecurityCredential
}

func validURL(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

func (s *Server) reversal(w http.ResponseWriter, body map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	invalid := func(field string) {
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid "+field)
	}
	switch {
	case text(body, "Initiator") == "":
		invalid("Initiator")
		return
	case text(body, "SecurityCredential") == "":
		invalid("SecurityCredential")
		return
	case text(body, "CommandID") != "TransactionReversal":
		invalid("CommandID")
		return
	case text(body, "TransactionID") == "":
		invalid("TransactionID")
		return
	case !amountPattern.MatchString(text(body, "Amount")):
		invalid("Amount")
		return
	case text(body, "ReceiverParty") != s.cfg.ShortCode:
		invalid("ReceiverParty")
		return
	case text(body, "RecieverIdentifierType") != "11":
		invalid("RecieverIdentifierType")
		return
	}
	if field := asyncFieldAtFault(body); field != "" {
		invalid(field)
		return
	}
	now := s.cfg.Clock()
	r := &Reversal{Original: strings.ToUpper(text(body, "TransactionID")), Amount: text(body, "Amount"),
		Initiator: text(body, "Initiator"), CredentialOK: s.credentialOK(body), ResultURL: text(body, "ResultURL"),
		TimeoutURL: text(body, "QueueTimeOutURL"), Remarks: text(body, "Remarks"), Occasion: text(body, "Occasion"), At: now}
	r.OriginatorConversationID, r.ConversationID = s.conversationIDs(now)
	r.Receipt = s.receipt()
	s.reversals[r.OriginatorConversationID] = r
	s.reversalOrder = append(s.reversalOrder, r.OriginatorConversationID)
	writeJSON(w, http.StatusOK, map[string]string{"OriginatorConversationID": r.OriginatorConversationID,
		"ConversationID": r.ConversationID, "ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
	if s.cfg.AutoSettle > 0 {
		id := r.OriginatorConversationID
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			select {
			case <-time.After(s.cfg.AutoSettle):
				_ = s.SettleReversal(s.ctx, id)
			case <-s.ctx.Done():
			}
		}()
	}
}

// paymentAmount finds a payment in the books.
func (s *Server) payment(receipt string) (Txn, bool) {
	for _, t := range s.txns {
		if t.ID == receipt {
			return t, true
		}
	}
	return Txn{}, false
}

// SettleReversal has M-Pesa process the reversal request whose
// OriginatorConversationID is id: it decides the verdict (once), books the
// reversal on success, and posts the timeout notice and the result as the
// outcome says. Settling a settled reversal delivers nothing more.
func (s *Server) SettleReversal(ctx context.Context, id string) error {
	s.mu.Lock()
	r, ok := s.reversals[id]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("mpesafake: no reversal %s", id)
	}
	if r.Settled {
		s.mu.Unlock()
		return nil
	}
	decide := s.cfg.DecideReversal
	if decide == nil {
		decide = func(Reversal, *rand.Rand) ReversalOutcome { return ReversalOutcome{} }
	}
	r.Outcome = decide(*r, s.rng)
	code := r.Outcome.ResultCode
	if code == "" {
		_, known := s.payment(r.Original)
		switch {
		case !r.CredentialOK:
			code = InitiatorInvalid
		case !known:
			code = ReversalInvalidOriginal
		case s.reversed[r.Original] != "":
			code = ReversalAlreadyReversed
		default:
			code = ReversalSuccess
		}
	}
	r.ResultCode, r.Settled = code, true
	now := s.cfg.Clock()
	r.SettledAt = now
	if code == ReversalSuccess {
		s.reversed[r.Original] = r.OriginatorConversationID
	}
	res := ReversalResult{OriginatorConversationID: r.OriginatorConversationID, ConversationID: r.ConversationID,
		ResultCode: code, Receipt: r.Receipt, Original: r.Original, Amount: r.Amount, At: now, Party: "254700000000 - CUSTOMER"}
	if p, ok := s.payment(r.Original); ok && p.MSISDN != "" {
		res.Party = p.MSISDN + " - CUSTOMER"
	}
	body := ReversalResultBody(res)
	timeout := ReversalTimeoutBody(r.OriginatorConversationID, r.ConversationID)
	times := map[Delivery]int{DeliverOnce: 1, DeliverTwice: 2, DeliverNever: 0}[r.Outcome.Callback]
	timedOut, resultURL, timeoutURL := r.Outcome.TimedOut, r.ResultURL, r.TimeoutURL
	s.mu.Unlock()
	if timedOut {
		if err := s.cfg.Deliver(ctx, timeoutURL, timeout); err != nil {
			return fmt.Errorf("mpesafake: deliver timeout of reversal %s: %w", id, err)
		}
		s.mu.Lock()
		r.TimeoutsDelivered++
		s.mu.Unlock()
	}
	for range times {
		if err := s.cfg.Deliver(ctx, resultURL, body); err != nil {
			return fmt.Errorf("mpesafake: deliver result of reversal %s: %w", id, err)
		}
		s.mu.Lock()
		r.Delivered++
		s.mu.Unlock()
	}
	return nil
}

// SettleReversals settles every unsettled reversal, in order.
func (s *Server) SettleReversals(ctx context.Context) error {
	s.mu.Lock()
	ids := slices.Clone(s.reversalOrder)
	s.mu.Unlock()
	for _, id := range ids {
		if err := s.SettleReversal(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// ReversalResultBodyOf returns the result body of a settled reversal.
func (s *Server) ReversalResultBodyOf(id string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reversals[id]
	if !ok || !r.Settled {
		return nil, false
	}
	return ReversalResultBody(ReversalResult{OriginatorConversationID: r.OriginatorConversationID, ConversationID: r.ConversationID,
		ResultCode: r.ResultCode, Receipt: r.Receipt, Original: r.Original, Amount: r.Amount, At: r.SettledAt,
		Party: "254700000000 - CUSTOMER"}), true
}

func (s *Server) transactionStatus(w http.ResponseWriter, body map[string]json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	invalid := func(field string) {
		s.darajaError(w, http.StatusBadRequest, "400.002.02", "Bad Request - Invalid "+field)
	}
	switch {
	case text(body, "Initiator") == "":
		invalid("Initiator")
		return
	case text(body, "SecurityCredential") == "":
		invalid("SecurityCredential")
		return
	case text(body, "CommandID") != "TransactionStatusQuery":
		invalid("CommandID")
		return
	case text(body, "TransactionID") == "" && text(body, "OriginalConversationID") == "":
		invalid("TransactionID")
		return
	case text(body, "PartyA") != s.cfg.ShortCode:
		invalid("PartyA")
		return
	case text(body, "IdentifierType") != "4":
		invalid("IdentifierType")
		return
	}
	if field := asyncFieldAtFault(body); field != "" {
		invalid(field)
		return
	}
	now := s.cfg.Clock()
	q := &StatusQuery{TransactionID: strings.ToUpper(text(body, "TransactionID")),
		OriginalConversationID: text(body, "OriginalConversationID"), Occasion: text(body, "Occasion"), ResultURL: text(body, "ResultURL")}
	q.OriginatorConversationID, q.ConversationID = s.conversationIDs(now)
	s.statusQueries = append(s.statusQueries, q)
	writeJSON(w, http.StatusOK, map[string]string{"OriginatorConversationID": q.OriginatorConversationID,
		"ConversationID": q.ConversationID, "ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
	res := s.statusAnswer(q, s.credentialOK(body), now)
	times := map[Delivery]int{DeliverOnce: 1, DeliverTwice: 2, DeliverNever: 0}[s.cfg.StatusCallback]
	delay := s.cfg.AutoSettle
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-s.ctx.Done():
				return
			}
		}
		b := StatusResultBody(res)
		for range times {
			if s.cfg.Deliver(s.ctx, q.ResultURL, b) != nil {
				return
			}
			s.mu.Lock()
			q.Delivered++
			s.mu.Unlock()
		}
	}()
}

// statusAnswer is what M-Pesa knows of the queried transaction: a reversal
// (by its OriginatorConversationID or receipt) or a payment (by receipt).
func (s *Server) statusAnswer(q *StatusQuery, credentialOK bool, now time.Time) StatusResult {
	res := StatusResult{OriginatorConversationID: q.OriginatorConversationID, ConversationID: q.ConversationID,
		Occasion: q.Occasion, At: now}
	if !credentialOK {
		res.ResultCode = InitiatorInvalid
		return res
	}
	var r *Reversal
	if q.OriginalConversationID != "" {
		r = s.reversals[q.OriginalConversationID]
	}
	for _, c := range s.reversals {
		if r == nil && q.TransactionID != "" && c.Receipt == q.TransactionID {
			r = c
		}
	}
	res.ResultCode = "0"
	switch {
	case r != nil:
		res.Receipt, res.Amount, res.ReasonType, res.At = r.Receipt, r.Amount, "Reversal", r.At
		res.QueriedOriginatorConversationID = r.OriginatorConversationID
		switch {
		case !r.Settled:
			res.Status = "Pending"
		case r.ResultCode == ReversalSuccess:
			res.Status, res.At = "Completed", r.SettledAt
		default:
			res.Status, res.At = "Failed", r.SettledAt
		}
	case q.TransactionID != "":
		p, ok := s.payment(q.TransactionID)
		if !ok {
			res.ResultCode = StatusNotFound
			return res
		}
		res.Receipt, res.Amount, res.ReasonType, res.At, res.Status = p.ID, p.Amount, "Pay Bill Online", p.At, "Completed"
		if s.reversed[p.ID] != "" {
			res.Status = "Reversed"
		}
	default:
		res.ResultCode = StatusNotFound
	}
	return res
}

// asyncFieldAtFault checks the fields every asynchronous Daraja request
// (reversal, transaction status) carries: where the result and the queue
// timeout are posted, and the free texts echoed back. It names the first
// field at fault, or returns "".
func asyncFieldAtFault(body map[string]json.RawMessage) string {
	switch {
	case !validURL(text(body, "ResultURL")):
		return "ResultURL"
	case !validURL(text(body, "QueueTimeOutURL")):
		return "QueueTimeOutURL"
	case text(body, "Remarks") == "" || len(text(body, "Remarks")) > 100:
		return "Remarks"
	case len(text(body, "Occasion")) > 100:
		return "Occasion"
	}
	return ""
}
