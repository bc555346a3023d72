package alerts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// An alert's reason is half of its unique key (subject, reason). It encodes
// exactly what makes an announcement new, so that seeing the same thing
// again maps to the same reason and is sent nothing:
//
//	opened                          a finding is announced for the first time
//	escalated:high:KES:3000.00      it reached this severity and amount at risk
//	escalated:high                  (a finding without an amount at risk)
//	reopened:2024-05-02T06:00:00Z   it came back after the resolution of that time
//	resolved:2024-05-03T06:00:00Z   it was resolved at that time (a follow-up)
//	summary:3f9a0c1d2e4b5a69:a2     a run summary of these open findings, planned
//	                                by the run's second attempt
//	request:7                       remedy 7 (a refund, a write-off) awaits a
//	                                second person (subject remedy:7)
//	decided:7:applied               what became of it: applied, rejected or
//	                                expired (a follow-up in its thread)
type reasonKind string

const (
	reasonOpened    reasonKind = "opened"
	reasonEscalated reasonKind = "escalated"
	reasonReopened  reasonKind = "reopened"
	reasonResolved  reasonKind = "resolved"
	reasonSummary   reasonKind = "summary"
	reasonRequest   reasonKind = "request"
	reasonDecided   reasonKind = "decided"
)

// reason is a parsed alert reason.
type reason struct {
	Kind reasonKind
	// Severity and AtRisk are the level an escalation reached.
	Severity ledger.Severity
	AtRisk   money.Amount
	// At is the resolution an escalation or reopening refers to.
	At time.Time
	// Fingerprint and Attempt identify a run summary.
	Fingerprint string
	Attempt     int
	// Remedy is the request a request or decided alert is about, and
	// Status what became of it.
	Remedy int64
	Status ledger.RemedyStatus
}

func (r reason) String() string {
	switch r.Kind {
	case reasonEscalated:
		if r.AtRisk.IsZero() {
			return fmt.Sprintf("escalated:%s", r.Severity)
		}
		return fmt.Sprintf("escalated:%s:%s:%s", r.Severity, r.AtRisk.Currency, r.AtRisk.Text())
	case reasonReopened, reasonResolved:
		return string(r.Kind) + ":" + r.At.UTC().Format(time.RFC3339Nano)
	case reasonSummary:
		return fmt.Sprintf("summary:%s:a%d", r.Fingerprint, r.Attempt)
	case reasonRequest:
		return fmt.Sprintf("request:%d", r.Remedy)
	case reasonDecided:
		return fmt.Sprintf("decided:%d:%s", r.Remedy, r.Status)
	}
	return string(r.Kind)
}

// parseReason reads a reason written by reason.String.
func parseReason(s string) (reason, error) {
	parts := strings.Split(s, ":")
	bad := func() (reason, error) {
		return reason{}, fmt.Errorf("alert reason %q is not one this package writes", s)
	}
	switch k := reasonKind(parts[0]); k {
	case reasonOpened:
		if len(parts) != 1 {
			return bad()
		}
		return reason{Kind: k}, nil
	case reasonEscalated:
		r := reason{Kind: k}
		switch len(parts) {
		case 2:
		case 4:
			a, err := money.Parse(parts[3], parts[2])
			if err != nil {
				return bad()
			}
			r.AtRisk = a
		default:
			return bad()
		}
		r.Severity = ledger.Severity(parts[1])
		if r.Severity.Rank() == 0 {
			return bad()
		}
		return r, nil
	case reasonReopened, reasonResolved:
		at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(s, string(k)+":"))
		if err != nil {
			return bad()
		}
		return reason{Kind: k, At: at.UTC()}, nil
	case reasonSummary:
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "a") {
			return bad()
		}
		n, err := strconv.Atoi(parts[2][1:])
		if err != nil || parts[1] == "" {
			return bad()
		}
		return reason{Kind: k, Fingerprint: parts[1], Attempt: n}, nil
	case reasonRequest, reasonDecided:
		want := map[reasonKind]int{reasonRequest: 2, reasonDecided: 3}[k]
		if len(parts) != want {
			return bad()
		}
		id, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil || id <= 0 {
			return bad()
		}
		r := reason{Kind: k, Remedy: id}
		if k == reasonDecided {
			r.Status = ledger.RemedyStatus(parts[2])
			switch r.Status {
			case ledger.RemedyApplied, ledger.RemedyRejected, ledger.RemedyExpired:
			default:
				return bad()
			}
		}
		return r, nil
	}
	return bad()
}

// remedySubject is the subject of the alerts about remedy id: its request
// message starts the thread its follow-up goes to.
func remedySubject(id int64) string { return "remedy:" + strconv.FormatInt(id, 10) }

// fingerprint identifies a set of open findings by what a summary shows of
// them: ids, severities and amounts. Acknowledging a finding or seeing it
// again does not change it; a new, grown or vanished finding does.
func fingerprint(findings []ledger.Finding) string {
	lines := make([]string, 0, len(findings))
	for _, f := range findings {
		lines = append(lines, strings.Join([]string{f.ID, string(f.Severity), f.AtRisk.Currency, f.AtRisk.Text(),
			f.Expected.Currency, f.Expected.Text(), f.Actual.Currency, f.Actual.Text()}, "\x1f"))
	}
	slices.Sort(lines)
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	if len(lines) == 0 {
		return "clean"
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
