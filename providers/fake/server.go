package fake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Failure is what the server does with one charge request.
type Failure int

// Failures.
const (
	// None charges normally.
	None Failure = iota
	// Unavailable answers 503 without charging: safe to retry.
	Unavailable
	// Decline refuses the charge for good (402).
	Decline
	// Hang charges nothing and answers only after the client gave up.
	Hang
	// ChargeThenDrop charges and then drops the connection: the caller
	// cannot know that it charged.
	ChargeThenDrop
)

// Options configure a Server.
type Options struct {
	// HonourKeys makes a repeated Idempotency-Key replay the first answer
	// instead of charging again.
	HonourKeys bool
	// Latency delays every charge.
	Latency time.Duration
	// Fail picks a failure for the n-th request (from 1) with key.
	Fail func(key string, n int) Failure
	// HangFor is how long Hang waits; default 30 s.
	HangFor time.Duration
}

// Charge is one charge the server made, or one refund (then ChargeID names
// the refunded charge).
type Charge struct {
	ID       string `json:"id"`
	Key      string `json:"key"`
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
	Status   string `json:"status"`
	ChargeID string `json:"charge,omitempty"`
}

// Server is the fake provider's HTTP server.
type Server struct {
	opts     Options
	srv      *httptest.Server
	mu       sync.Mutex
	requests map[string]int
	charges  map[string][]Charge
	refunds  map[string][]Charge
	byID     map[string]Charge
	replies  map[string][]byte
	seq      int
}

// NewServer starts a server on a loopback port.
func NewServer(opts Options) *Server {
	if opts.HangFor == 0 {
		opts.HangFor = 30 * time.Second
	}
	s := &Server{opts: opts, requests: map[string]int{}, charges: map[string][]Charge{}, refunds: map[string][]Charge{},
		byID: map[string]Charge{}, replies: map[string][]byte{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/charges", s.charge)
	mux.HandleFunc("GET /v1/charges/{id}", s.get)
	mux.HandleFunc("POST /v1/refunds", s.charge)
	mux.HandleFunc("GET /v1/refunds/{id}", s.get)
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Charges returns the charges made under key.
func (s *Server) Charges(key string) []Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Charge(nil), s.charges[key]...)
}

// ChargeCounts returns how many charges were made per key.
func (s *Server) ChargeCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.charges))
	for k, c := range s.charges {
		out[k] = len(c)
	}
	return out
}

// Refunds returns the refunds made under key.
func (s *Server) Refunds(key string) []Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Charge(nil), s.refunds[key]...)
}

// RefundCounts returns how many refunds were made per key.
func (s *Server) RefundCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.refunds))
	for k, c := range s.refunds {
		out[k] = len(c)
	}
	return out
}

// Requests returns how many charge (or refund) requests arrived per key.
func (s *Server) Requests(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[key]
}

type chargeRequest struct {
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
	Customer string `json:"customer"`
	// Charge names the charge a refund gives money back for.
	Charge string `json:"charge,omitempty"`
}

// charge serves a charge, or a refund of a charge the server made (the
// same failures apply to both).
func (s *Server) charge(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	refund := r.URL.Path == "/v1/refunds"
	var req chargeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || key == "" || req.Amount == "" || refund != (req.Charge != "") {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	if refund {
		s.mu.Lock()
		ch, ok := s.byID[req.Charge]
		s.mu.Unlock()
		if !ok || ch.ChargeID != "" {
			http.Error(w, `{"error":"no_such_charge"}`, http.StatusBadRequest)
			return
		}
	}
	if s.opts.Latency > 0 {
		time.Sleep(s.opts.Latency)
	}
	s.mu.Lock()
	s.requests[key]++
	n := s.requests[key]
	if reply, ok := s.replies[key]; ok && s.opts.HonourKeys {
		s.mu.Unlock()
		w.Header().Set("Idempotent-Replayed", "true")
		writeJSON(w, http.StatusOK, reply)
		return
	}
	failure := None
	if s.opts.Fail != nil {
		failure = s.opts.Fail(key, n)
	}
	switch failure {
	case Unavailable:
		s.mu.Unlock()
		http.Error(w, `{"error":"unavailable"}`, http.StatusServiceUnavailable)
		return
	case Decline:
		body := []byte(`{"error":"card_declined","message":"the card was declined"}`)
		if s.opts.HonourKeys {
			s.replies[key] = body
		}
		s.mu.Unlock()
		writeJSON(w, http.StatusPaymentRequired, body)
		return
	case Hang:
		s.mu.Unlock()
		select {
		case <-time.After(s.opts.HangFor):
		case <-r.Context().Done():
		}
		http.Error(w, `{"error":"timeout"}`, http.StatusGatewayTimeout)
		return
	}
	s.seq++
	c := Charge{ID: fmt.Sprintf("ch_%06d", s.seq), Key: key, Amount: req.Amount, Currency: strings.ToUpper(req.Currency), Status: "succeeded"}
	if refund {
		c.ID, c.ChargeID = fmt.Sprintf("re_%06d", s.seq), req.Charge
		s.refunds[key] = append(s.refunds[key], c)
	} else {
		s.charges[key] = append(s.charges[key], c)
	}
	s.byID[c.ID] = c
	body, _ := json.Marshal(c)
	if s.opts.HonourKeys {
		s.replies[key] = body
	}
	s.mu.Unlock()
	if failure == ChargeThenDrop {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler)
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	c, ok := s.byID[r.PathValue("id")]
	s.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":"not_found"}`, http.StatusNotFound)
		return
	}
	body, _ := json.Marshal(c)
	writeJSON(w, http.StatusOK, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
