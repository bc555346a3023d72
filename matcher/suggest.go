package matcher

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reconcilehq/reconcile/ledger"
)

// Suggestions pair the leftovers of a matching: an unknown_charge (a
// successful charge that linked to nothing) and a missing_at_provider (an
// intent that succeeded with no charge) of the same amount and currency
// whose references are close (one edit apart in normal form, an adjacent
// swap included, or equal once look-alike characters are read alike: O/0,
// I/L/1, S/5, B/8) or whose customer is the same. Each finding gets its one
// best suggestion, never applied: a person accepts it with a manual match.
// Only the leftovers are looked at, so the matched bulk costs nothing.

// leftover is a finding that may carry a suggestion: its index in the
// result's findings and the index of its transaction or intent.
type leftover struct {
	finding int
	rec     int32
	// minor is a charge's amount net of refunds.
	minor int64
}

type leftovers struct{ intents, txns []leftover }

// Reasons a pair is suggested, best first.
const (
	closeNone      = iota
	closeConfusion // equal once look-alikes are read alike
	closeEdit      // one edit or adjacent swap apart
)

// Half is one unmatched half of a possible pair: an intent the provider
// shows no charge for (missing_at_provider) or a charge that linked to no
// intent (unknown_charge), with its finding.
type Half struct {
	FindingID string
	// IntentKey is set for an intent, TxnID for a charge.
	IntentKey, TxnID string
	// Amount is the intent's, or the charge's net of refunds.
	Amount Money
	// Reference is the intent's reference (its key when it has none) or the
	// reference the charge echoed, as given.
	Reference string
	// Customer is the intent's customer or the charge's counterparty
	// (masked).
	Customer string
	At       time.Time
	// Local marks a half of the window being run: a pair of two halves of
	// other windows is left to their windows.
	Local bool
}

// Money is an amount in integer minor units and its currency, as halves
// compare them.
type Money struct {
	Minor    int64
	Currency string
}

// candidate is one possible pairing, with what ranks it.
type candidate struct {
	intent, txn *Half
	ref         int // closeNone, closeConfusion or closeEdit
	sameCust    bool
	gap         uint64
	tref, iref  string
}

// betterCandidate reports whether a ranks before b: a close reference and
// the same customer, then a close reference (a confusion before an edit),
// then the same customer; then the nearest in time; then the smaller intent
// key and transaction id.
func betterCandidate(a, b *candidate) bool {
	score := func(c *candidate) int {
		s := 0
		if c.ref != closeNone {
			s += 4
			if c.ref == closeConfusion {
				s++
			}
		}
		if c.sameCust {
			s += 2
		}
		return s
	}
	if sa, sb := score(a), score(b); sa != sb {
		return sa > sb
	}
	if a.gap != b.gap {
		return a.gap < b.gap
	}
	if c := cmp.Compare(a.intent.IntentKey, b.intent.IntentKey); c != 0 {
		return c < 0
	}
	return a.txn.TxnID < b.txn.TxnID
}

// Suggest pairs halves: each half gets its one best counterpart of the same
// amount and currency whose reference is close (one edit apart in normal
// form, an adjacent swap included, or equal once look-alike characters are
// read alike: O/0, I/L/1, S/5, B/8) or whose customer is the same (the same
// masked phone or e-mail, whatever else the counterparty says; a charge
// whose reference is the customer's phone number counts too). Pairs of two
// halves that are not Local are not made. The result maps each finding id
// to its suggestion.
func Suggest(intents, txns []Half) map[string]ledger.Suggestion {
	out := map[string]ledger.Suggestion{}
	if len(intents) == 0 || len(txns) == 0 {
		return out
	}
	byAmount := map[Money][]*Half{}
	for k := range intents {
		byAmount[intents[k].Amount] = append(byAmount[intents[k].Amount], &intents[k])
	}
	bestOf := map[string]*candidate{} // by finding id
	keep := func(f string, c *candidate) {
		if b, ok := bestOf[f]; !ok || betterCandidate(c, b) {
			bestOf[f] = c
		}
	}
	for k := range txns {
		t := &txns[k]
		cands := byAmount[t.Amount]
		if len(cands) == 0 {
			continue
		}
		tref := NormalReference(t.Reference)
		for _, in := range cands {
			if !in.Local && !t.Local {
				continue
			}
			iref := NormalReference(in.Reference)
			c := &candidate{intent: in, txn: t, ref: closeness(tref, iref), tref: tref, iref: iref,
				gap: absDiff(in.At.UnixNano(), t.At.UnixNano())}
			c.sameCust = ledger.SameCustomer(t.Customer, in.Customer) || isPhone(t.Reference) && ledger.SameCustomer(t.Reference, in.Customer)
			if c.ref == closeNone && !c.sameCust {
				continue
			}
			keep(in.FindingID, c)
			keep(t.FindingID, c)
		}
	}
	for f, c := range bestOf {
		other, cp := c.intent.FindingID, c.txn.Customer
		if f == other {
			other = c.txn.FindingID
		}
		out[f] = ledger.Suggestion{FindingID: other, IntentKey: c.intent.IntentKey, TxnID: c.txn.TxnID, Reason: c.reason(ledger.MaskCustomer(cp))}
	}
	return out
}

// isPhone reports whether a reference is a phone number typed as one.
func isPhone(ref string) bool {
	n := 0
	for _, r := range strings.TrimSpace(ref) {
		switch {
		case r >= '0' && r <= '9':
			n++
		case r == '+' || r == ' ' || r == '-':
		default:
			return false
		}
	}
	return n >= 9
}

// suggest sets the Suggestion of each leftover finding of the window to its
// best candidate among the window's leftovers.
func (m *Matcher) suggest(fs []ledger.Finding, left leftovers) {
	if len(left.intents) == 0 || len(left.txns) == 0 {
		return
	}
	// (The findings are not sorted yet: their indexes hold.)
	ins, txns := m.halves(fs, left)
	for id, s := range Suggest(ins, txns) {
		for i := range fs {
			if fs[i].ID == id {
				fs[i].Suggestion = s
			}
		}
	}
}

// halves describes the window's leftover findings as halves of pairs.
func (m *Matcher) halves(fs []ledger.Finding, left leftovers) (ins, txns []Half) {
	for _, l := range left.intents {
		in := m.intents.ptr(l.rec)
		ref := string(m.ref(in))
		if ref == "" {
			ref = string(m.key(in))
		}
		ins = append(ins, Half{FindingID: fs[l.finding].ID, IntentKey: string(m.key(in)), Amount: Money{in.minor, m.curs[in.cur]},
			Reference: ref, Customer: string(m.cust(in)), At: m.time(in.created), Local: true})
	}
	for _, l := range left.txns {
		t := m.txns.ptr(l.rec)
		txns = append(txns, Half{FindingID: fs[l.finding].ID, TxnID: string(m.id(t)), Amount: Money{l.minor, m.curs[t.cur]},
			Reference: m.ar.str(m.unlinkedRefs[l.rec][0]), Customer: string(m.cp(t)), At: m.time(t.at), Local: true})
	}
	return ins, txns
}

func (c *candidate) reason(cp string) string {
	s := "same amount and currency"
	switch c.ref {
	case closeConfusion:
		s += fmt.Sprintf("; reference %s reads as %s (look-alike characters)", strconv.Quote(c.tref), strconv.Quote(c.iref))
	case closeEdit:
		s += fmt.Sprintf("; reference %s is one typo from %s", strconv.Quote(c.tref), strconv.Quote(c.iref))
	}
	if c.sameCust {
		s += "; same customer"
		if cp != "" {
			s += " " + cp
		}
	}
	return s
}

// closeness says how close two normal references are: equal once
// look-alike characters are read alike, one edit apart, or neither. Equal
// references are not close (they would have linked). Empty ones never are.
func closeness(a, b string) int {
	if a == "" || b == "" || a == b {
		return closeNone
	}
	if len(a) == len(b) {
		same := true
		for i := 0; i < len(a) && same; i++ {
			same = lookAlike(a[i]) == lookAlike(b[i])
		}
		if same {
			return closeConfusion
		}
	}
	if oneEdit(a, b) {
		return closeEdit
	}
	return closeNone
}

// lookAlike maps characters often misread or mistyped for one another to
// one of them.
func lookAlike(c byte) byte {
	switch c {
	case 'O':
		return '0'
	case 'I', 'L':
		return '1'
	case 'S':
		return '5'
	case 'B':
		return '8'
	}
	return c
}

// oneEdit reports whether a and b differ by one insertion, deletion or
// substitution of a character, or by one swap of adjacent characters.
// Characters, not bytes: a non-ASCII letter is one character.
func oneEdit(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return oneEditOf([]byte(a), []byte(b))
	}
	return oneEditOf([]rune(a), []rune(b))
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func oneEditOf[T byte | rune](a, b []T) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	switch len(b) - len(a) {
	case 0:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		if i == len(a) {
			return false
		}
		if slices.Equal(a[i+1:], b[i+1:]) {
			return true
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && slices.Equal(a[i+2:], b[i+2:])
	case 1:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		return slices.Equal(a[i:], b[i+1:])
	}
	return false
}
