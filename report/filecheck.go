package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// FileCheck is what an import's dry run found in a file, without writing
// anything: the rows read and refused, how many the books hold already
// (and how many they hold otherwise: a key reused with other parameters,
// an id with another amount), counts by kind and state, the totals per
// currency and the largest amounts, so that a file in the wrong unit (cents
// for shillings) is seen before it is imported.
type FileCheck struct {
	File string
	// What names a row: "intent" or "transaction".
	What    string
	Rows    int
	Refused int
	// Problems are the first refusals, as the import would report them.
	Problems []string
	// New, Known and Differ count the good rows the books do not hold,
	// hold as they are, and hold otherwise.
	New, Known, Differ int
	// Checked is false when the books were not read (New, Known and Differ
	// are then zero).
	Checked bool
	Kinds   map[string]int
	States  map[string]int
	totals  map[string]decimal.Decimal
	counts  map[string]int
	largest map[string][]Largest
}

// Largest is one of the largest amounts of a file: its row's key and
// where the row is ("line 12").
type Largest struct {
	Amount money.Amount
	Key    string
	Where  string
}

// maxProblems and maxLargest bound what a check keeps.
const (
	maxProblems = 10
	maxLargest  = 5
)

// NewFileCheck starts the check of file, whose rows are of what.
func NewFileCheck(file, what string) *FileCheck {
	return &FileCheck{File: file, What: what, Kinds: map[string]int{}, States: map[string]int{}, totals: map[string]decimal.Decimal{},
		counts: map[string]int{}, largest: map[string][]Largest{}}
}

// Add counts a good row: its key (intent key, transaction id), where it is
// in the file, its amount, kind and state.
func (c *FileCheck) Add(key, where string, a money.Amount, kind, state string) {
	c.Rows++
	c.Kinds[kind]++
	c.States[state]++
	if a.IsZero() {
		return
	}
	v := a.Value.Abs()
	c.totals[a.Currency] = c.totals[a.Currency].Add(v)
	c.counts[a.Currency]++
	top := c.largest[a.Currency]
	if len(top) == maxLargest && !v.GreaterThan(top[len(top)-1].Amount.Value) {
		return
	}
	top = append(top, Largest{Amount: money.Amount{Value: v, Currency: a.Currency}, Key: key, Where: where})
	slices.SortStableFunc(top, func(x, y Largest) int { return y.Amount.Value.Cmp(x.Amount.Value) })
	if len(top) > maxLargest {
		top = top[:maxLargest]
	}
	c.largest[a.Currency] = top
}

// Refuse counts a refused row and keeps the first problems.
func (c *FileCheck) Refuse(perr *ledger.ParseError) {
	c.Rows++
	c.Refused++
	if len(c.Problems) < maxProblems {
		c.Problems = append(c.Problems, perr.Error())
	}
}

// WriteFileCheck renders c for a person.
func WriteFileCheck(w io.Writer, c *FileCheck) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: dry run, nothing written\n\n", ledger.SafeLine(c.File, 400))
	fmt.Fprintf(&b, "  rows          %s (%s good, %s refused)\n", count(c.Rows), count(c.Rows-c.Refused), count(c.Refused))
	if c.Checked {
		fate := "refused on import"
		if c.What == "transaction" {
			fate = "quarantined on import"
		}
		fmt.Fprintf(&b, "  in the books  %s new, %s already present, %s present otherwise (%s)\n",
			count(c.New), count(c.Known), count(c.Differ), fate)
	} else {
		b.WriteString("  in the books  not checked\n")
	}
	if len(c.Kinds) > 0 {
		fmt.Fprintf(&b, "  kinds         %s\n", tally(c.Kinds))
		fmt.Fprintf(&b, "  states        %s\n", tally(c.States))
	}
	for i, cur := range slices.Sorted(maps.Keys(c.totals)) {
		label := "totals"
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(&b, "  %-12s  %s (%s %s(s))\n", label, ledger.ShowAmount(money.Amount{Value: c.totals[cur], Currency: cur}), count(c.counts[cur]), c.What)
	}
	for _, cur := range slices.Sorted(maps.Keys(c.largest)) {
		fmt.Fprintf(&b, "\n  largest in %s\n", cur)
		for _, l := range c.largest[cur] {
			fmt.Fprintf(&b, "    %16s  %s (%s)\n", ledger.ShowAmount(l.Amount), ledger.SafeLine(l.Key, 200), ledger.SafeLine(l.Where, 200))
		}
	}
	if len(c.Problems) > 0 {
		b.WriteString("\n  refused\n")
		for _, p := range c.Problems {
			fmt.Fprintf(&b, "    %s\n", ledger.SafeLine(p, 400))
		}
		if c.Refused > len(c.Problems) {
			fmt.Fprintf(&b, "    ... and %s more\n", count(c.Refused-len(c.Problems)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tally renders counts by name, the largest first: "charge 6, expected 2".
func tally(m map[string]int) string {
	names := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(names, func(a, b string) int { return m[b] - m[a] })
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %s", n, count(m[n]))
	}
	return strings.Join(parts, ", ")
}
