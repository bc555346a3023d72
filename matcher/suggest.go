package matcher

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
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

// candidate is one possible pairing, with what ranks it.
type candidate struct {
	intent, txn leftover
	ref         int // closeNone, closeConfusion or closeEdit
	sameCust    bool
	gap         uint64
	tref, iref  string
}

// better reports whether a ranks before b: a close reference and the same
// customer, then a close reference (a confusion before an edit), then the
// same customer; then the nearest in time; then the smaller intent key and
// transaction id.
func (m *Matcher) betterCandidate(a, b *candidate) bool {
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
	ka, kb := string(m.key(m.intents.ptr(a.intent.rec))), string(m.key(m.intents.ptr(b.intent.rec)))
	if c := cmp.Compare(ka, kb); c != 0 {
		return c < 0
	}
	return string(m.id(m.txns.ptr(a.txn.rec))) < string(m.id(m.txns.ptr(b.txn.rec)))
}

// suggest sets the Suggestion of each leftover finding to its best
// candidate.
func (m *Matcher) suggest(fs []ledger.Finding, left leftovers) {
	if len(left.intents) == 0 || len(left.txns) == 0 {
		return
	}
	type amountKey struct {
		cur   uint8
		minor int64
	}
	byAmount := map[amountKey][]leftover{}
	for _, l := range left.intents {
		in := m.intents.ptr(l.rec)
		k := amountKey{in.cur, in.minor}
		byAmount[k] = append(byAmount[k], l)
	}
	bestOf := map[int]*candidate{} // by finding index
	keep := func(f int, c *candidate) {
		if b, ok := bestOf[f]; !ok || m.betterCandidate(c, b) {
			bestOf[f] = c
		}
	}
	for _, lt := range left.txns {
		t := m.txns.ptr(lt.rec)
		cands := byAmount[amountKey{t.cur, lt.minor}]
		if len(cands) == 0 {
			continue
		}
		tref := NormalReference(m.ar.str(m.unlinkedRefs[lt.rec][0]))
		cp := string(m.cp(t))
		for _, li := range cands {
			in := m.intents.ptr(li.rec)
			iref := NormalReference(string(m.ref(in)))
			if iref == "" {
				iref = NormalReference(string(m.key(in)))
			}
			c := &candidate{intent: li, txn: lt, ref: closeness(tref, iref), tref: tref, iref: iref,
				gap: absDiff(in.created, t.at)}
			c.sameCust = cp != "" && len(m.cust(in)) > 0 && ledger.MaskCustomer(string(m.cust(in))) == cp
			if c.ref == closeNone && !c.sameCust {
				continue
			}
			keep(lt.finding, c)
			keep(li.finding, c)
		}
	}
	for f, c := range bestOf {
		key, id := string(m.key(m.intents.ptr(c.intent.rec))), string(m.id(m.txns.ptr(c.txn.rec)))
		other := c.intent.finding
		if f == other {
			other = c.txn.finding
		}
		fs[f].Suggestion = ledger.Suggestion{FindingID: fs[other].ID, IntentKey: key, TxnID: id, Reason: c.reason(fs[f].Counterparty)}
	}
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
