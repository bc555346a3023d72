package matcher

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"time"
)

// Explain says, after Result, what the evidence now shows about the
// intents keyed keys and the transactions ids, for the notes of the
// findings a run resolves: "paid 2026-03-14 10:00 EAT (+03:00), SCG1AA0001,
// 2 days after the intent", "linked to intent inv:3001, created ...".
// Intents and transactions it cannot explain (not added, or with no
// evidence) are left out of the maps.
func (m *Matcher) Explain(keys, ids []string) (byIntent, byTxn map[string]string) {
	byIntent, byTxn = map[string]string{}, map[string]string{}
	if m.err != nil || !m.indexed {
		return byIntent, byTxn
	}
	for _, k := range keys {
		i := m.lookupKey(k, maphash.String(m.seed, k))
		if i == noIdx {
			continue
		}
		if s := m.explainIntent(i); s != "" {
			byIntent[k] = s
		}
	}
	if len(ids) == 0 {
		return byIntent, byTxn
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for i := range int32(m.txns.len()) {
		t := m.txns.ptr(i)
		if !want[string(m.id(t))] || t.intent == noIdx {
			continue
		}
		in := m.intents.ptr(t.intent)
		byTxn[string(m.id(t))] = fmt.Sprintf("linked to intent %s, created %s, %s", m.key(in), m.when(in.created),
			m.daysApart(t.at, in.created, "the payment"))
	}
	return byIntent, byTxn
}

// explainIntent describes the successful evidence of intent i, and what
// was given back of it.
func (m *Matcher) explainIntent(i int32) string {
	in := m.intents.ptr(i)
	var paid, back []int32
	for j := in.head; j != noIdx; j = m.txns.at(j).next {
		t := m.txns.ptr(j)
		switch {
		case t.status != tsSucceeded:
		case in.refund() && m.refundLike(t.typ), !in.refund() && t.typ == tyCharge:
			paid = append(paid, j)
		case t.typ == tyRefund || t.typ == tyReversal:
			back = append(back, j)
		}
	}
	if len(paid) == 0 {
		return ""
	}
	byTime := func(a, b int32) int {
		ta, tb := m.txns.ptr(a), m.txns.ptr(b)
		if ta.at != tb.at {
			return int(max(-1, min(1, ta.at-tb.at)))
		}
		return strings.Compare(string(m.id(ta)), string(m.id(tb)))
	}
	slices.SortFunc(paid, byTime)
	slices.SortFunc(back, byTime)
	verb := "paid"
	if in.refund() {
		verb = "refunded"
	}
	var b strings.Builder
	last := m.txns.ptr(paid[len(paid)-1])
	if len(paid) == 1 {
		fmt.Fprintf(&b, "%s %s, %s, %s", verb, m.when(last.at), m.id(last), m.daysApart(in.created, last.at, "the intent"))
	} else {
		fmt.Fprintf(&b, "%s in %d parts: ", verb, len(paid))
		for k, j := range paid {
			t := m.txns.ptr(j)
			if k > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s on %s (%s)", show(m.amountOf(t.minor, t.cur)), m.when(t.at), m.id(t))
		}
		fmt.Fprintf(&b, "; the last %s", m.daysApart(in.created, last.at, "the intent"))
	}
	for _, j := range back {
		t := m.txns.ptr(j)
		fmt.Fprintf(&b, "; %s given back on %s (%s)", show(m.amountOf(t.minor, t.cur)), m.when(t.at), m.id(t))
	}
	return b.String()
}

// daysApart says how many calendar days (in the options' zone) lie between
// from and to, relative to what: "2 days after the intent", "the same day
// as the intent", "1 day before the payment".
func (m *Matcher) daysApart(from, to int64, what string) string {
	zone := m.opt.Zone
	if zone == nil {
		zone = time.UTC
	}
	day := func(ns int64) time.Time {
		y, mo, d := time.Unix(0, ns).In(zone).Date()
		return time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
	}
	n := int(day(to).Sub(day(from)).Hours() / 24)
	switch {
	case n == 0:
		return "the same day as " + what
	case n == 1:
		return "1 day after " + what
	case n > 1:
		return fmt.Sprintf("%d days after %s", n, what)
	case n == -1:
		return "1 day before " + what
	}
	return fmt.Sprintf("%d days before %s", -n, what)
}
