package matcher_test

import (
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// Suggestions, from findings.md: each unknown_charge and each
// missing_at_provider without a pending charge is compared with the other
// kind of the same amount and currency.

const (
	whyNone = iota
	whyTypo
	whyLookAlike
)

// lookAlikes reads look-alike characters alike.
var lookAlikes = map[rune]rune{'O': '0', 'I': '1', 'L': '1', 'S': '5', 'B': '8'}

func readAlike(s string) string {
	return strings.Map(func(c rune) rune {
		if d, ok := lookAlikes[c]; ok {
			return d
		}
		return c
	}, s)
}

// editDistance is the optimal string alignment distance of a and b, in
// characters: insertions, deletions, substitutions and swaps of adjacent
// characters.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

func closeRefs(a, b string) int {
	switch {
	case a == "" || b == "" || a == b:
		return whyNone
	case len([]rune(a)) == len([]rune(b)) && readAlike(a) == readAlike(b):
		return whyLookAlike
	case editDistance(a, b) == 1:
		return whyTypo
	}
	return whyNone
}

type refCand struct {
	intent *rIntent
	txn    *rTxn
	fi, ft int // finding indexes
	why    int
	same   bool
	gap    time.Duration
}

// rank orders candidates: close reference and same customer, then close
// reference (look-alike before typo), then same customer.
func (c refCand) rank() int {
	s := 0
	switch c.why {
	case whyLookAlike:
		s = 5
	case whyTypo:
		s = 4
	}
	if c.same {
		s += 2
	}
	return s
}

func (r *ref) suggest(missing, unknown []int) {
	best := map[int]refCand{}
	offer := func(f int, c refCand) {
		b, ok := best[f]
		if !ok {
			best[f] = c
			return
		}
		switch {
		case c.rank() != b.rank():
			if c.rank() > b.rank() {
				best[f] = c
			}
		case c.gap != b.gap:
			if c.gap < b.gap {
				best[f] = c
			}
		case c.intent.key != b.intent.key:
			if c.intent.key < b.intent.key {
				best[f] = c
			}
		case c.txn.id < b.txn.id:
			best[f] = c
		}
	}
	for _, ft := range unknown {
		t := r.txns[r.findings[ft].ProviderTxnIDs[0]]
		for _, fi := range missing {
			in := r.intents[r.findings[fi].IntentKey]
			if in.cur != t.cur || in.minor != r.net(t) {
				continue
			}
			iref := normal(in.rawRef)
			if iref == "" {
				iref = normal(in.key)
			}
			c := refCand{intent: in, txn: t, fi: fi, ft: ft, why: closeRefs(normal(t.ref), iref), gap: in.created.Sub(t.at).Abs(),
				same: refSameCustomer(t.cp, in.customer) || refIsPhone(t.ref) && refSameCustomer(t.ref, in.customer)}
			if c.why == whyNone && !c.same {
				continue
			}
			offer(fi, c)
			offer(ft, c)
		}
	}
	for f, c := range best {
		other := c.fi
		if f == c.fi {
			other = c.ft
		}
		why := "same amount and currency"
		switch c.why {
		case whyLookAlike:
			why += "; look-alike"
		case whyTypo:
			why += "; one typo"
		}
		if c.same {
			why += "; same customer"
		}
		r.findings[f].Suggestion = ledger.Suggestion{FindingID: r.findings[other].ID, IntentKey: c.intent.key, TxnID: c.txn.id, Reason: why}
	}
}

// refSameCustomer is the customer rule of findings.md, written apart from
// the matcher's: the same e-mail, or the same phone number in its masked
// international form (first four and last four digits), whatever name
// follows " - " and whether the number is written 07... or 2547....
func refSameCustomer(a, b string) bool {
	key := func(s string) string {
		s, _, _ = strings.Cut(strings.TrimSpace(s), " - ")
		if strings.Contains(s, "@") {
			return strings.ToLower(ledger.MaskCustomer(s))
		}
		var d []byte
		for i := 0; i < len(s); i++ {
			if s[i] >= '0' && s[i] <= '9' || s[i] == '*' {
				d = append(d, s[i])
			}
		}
		if len(d) == 10 && d[0] == '0' && d[1] != '*' {
			d = append([]byte("254"), d[1:]...)
		}
		if len(d) < 9 {
			return ""
		}
		return string(d[:4]) + "****" + string(d[len(d)-4:])
	}
	ka := key(a)
	return ka != "" && ka == key(b)
}

// refIsPhone: a reference of nine digits or more and nothing but digits,
// spaces, dashes and a plus.
func refIsPhone(s string) bool {
	n := 0
	for _, r := range strings.TrimSpace(s) {
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
