package console

import (
	"cmp"
	"context"
	"fmt"
	"html"
	"html/template"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// The findings page's charts, drawn on the server as inline SVG (the page
// runs no script): the money at risk in unresolved findings at the end of
// each of the last 30 days, by kind (one chart per currency); the ageing
// of the unresolved findings; the match rate of the last runs. Each is
// legible without colour: kinds are told apart by fill patterns named in
// a legend, bars carry their numbers as text or as a title, and each chart
// has a title and a description for screen readers.

// chartDays is how many days the at-risk chart shows.
const chartDays = 30

// patterns are the fills of the kinds, in legend order: each differs from
// the others in shape, not only in shade.
var patterns = []struct{ id, svg string }{
	{"solid", `<rect width="6" height="6" fill="#333"/>`},
	{"hatch", `<rect width="6" height="6" fill="#fff"/><path d="M0,6 L6,0 M-1,1 L1,-1 M5,7 L7,5" stroke="#333" stroke-width="1.5"/>`},
	{"dots", `<rect width="6" height="6" fill="#fff"/><circle cx="3" cy="3" r="1.6" fill="#333"/>`},
	{"rows", `<rect width="6" height="6" fill="#fff"/><path d="M0,1.5 H6 M0,4.5 H6" stroke="#333" stroke-width="1"/>`},
	{"cross", `<rect width="6" height="6" fill="#fff"/><path d="M0,0 L6,6 M6,0 L0,6" stroke="#333" stroke-width="1"/>`},
	{"grey", `<rect width="6" height="6" fill="#aaa"/>`},
}

// maxKinds is how many kinds get a pattern of their own; the rest are
// drawn together as "other kinds".
var maxKinds = len(patterns) - 1

// dayRisk is the money at risk of one kind at the end of one day.
type dayRisk map[ledger.Kind]decimal.Decimal

// riskCharts draws one at-risk chart per currency of fs, over the
// chartDays days ending with today (in zone).
func riskCharts(fs []ledger.Finding, now time.Time, zone *time.Location) []template.HTML {
	if zone == nil {
		zone = time.UTC
	}
	y, m, d := now.In(zone).Date()
	last := time.Date(y, m, d, 0, 0, 0, 0, zone)
	first := last.AddDate(0, 0, -(chartDays - 1))
	ends := make([]time.Time, chartDays) // the end of each day
	for i := range ends {
		ends[i] = first.AddDate(0, 0, i+1)
	}
	// A finding is at risk at the end of the days [from, to): from the
	// first day that ends after it was first seen, to the first that ends
	// after it was resolved. Its amount is added on its first day and taken
	// off after its last, per currency and kind; the days are then summed
	// in order.
	after := func(t time.Time) int {
		i, _ := slices.BinarySearchFunc(ends, t, func(end, t time.Time) int {
			if t.Before(end) {
				return 1
			}
			return -1
		})
		return i
	}
	steps := map[string]map[ledger.Kind][]decimal.Decimal{}
	for i := range fs {
		f := &fs[i]
		if f.AtRisk.IsZero() || !f.AtRisk.Value.IsPositive() {
			continue
		}
		from, to := after(f.FirstSeenAt), chartDays
		if f.Status == ledger.FindingResolved {
			to = after(f.ResolvedAt)
		}
		if from >= to {
			continue
		}
		byKind := steps[f.AtRisk.Currency]
		if byKind == nil {
			byKind = map[ledger.Kind][]decimal.Decimal{}
			steps[f.AtRisk.Currency] = byKind
		}
		st := byKind[f.Kind]
		if st == nil {
			st = make([]decimal.Decimal, chartDays+1)
			byKind[f.Kind] = st
		}
		st[from] = st[from].Add(f.AtRisk.Value)
		st[to] = st[to].Sub(f.AtRisk.Value)
	}
	var out []template.HTML
	for _, cur := range slices.Sorted(maps.Keys(steps)) {
		days := make([]dayRisk, chartDays)
		for i := range days {
			days[i] = dayRisk{}
		}
		totals := map[ledger.Kind]decimal.Decimal{}
		for k, st := range steps[cur] {
			run := decimal.Zero
			for i := range days {
				run = run.Add(st[i])
				if run.IsPositive() {
					days[i][k] = run
					totals[k] = totals[k].Add(run)
				}
			}
		}
		out = append(out, riskChart(cur, first, days, totals, zone))
	}
	return out
}

// The layout of an at-risk chart, in pixels.
const (
	riskWidth, riskHeight = 640, 170
	riskLeft, riskTop     = 8, 16
	riskPlotH             = 110
	riskBarW, riskGap     = 17, 3
)

// otherKinds groups the kinds past maxKinds in an at-risk chart.
const otherKinds = ledger.Kind("other kinds")

// riskChart draws the stacked bars of one currency.
func riskChart(cur string, first time.Time, days []dayRisk, totals map[ledger.Kind]decimal.Decimal, zone *time.Location) template.HTML {
	kinds := chartKinds(totals)
	peak := decimal.Zero
	for _, d := range days {
		sum := decimal.Zero
		for _, v := range d {
			sum = sum.Add(v)
		}
		peak = decimal.Max(peak, sum)
	}
	var b strings.Builder
	writeRiskHead(&b, cur, days, peak)
	writeRiskBars(&b, cur, first, days, kinds, peak, zone)
	writeRiskLegend(&b, kinds)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// chartKinds orders the kinds by the most at risk over the days; past
// maxKinds, the rest are grouped as otherKinds, which ends the list.
func chartKinds(totals map[ledger.Kind]decimal.Decimal) []ledger.Kind {
	kinds := slices.Collect(maps.Keys(totals))
	slices.SortFunc(kinds, func(a, b ledger.Kind) int {
		if c := totals[b].Cmp(totals[a]); c != 0 {
			return c
		}
		return strings.Compare(string(a), string(b))
	})
	if len(kinds) > maxKinds {
		kinds = append(kinds[:maxKinds:maxKinds], otherKinds)
	}
	return kinds
}

// writeRiskHead opens the chart's svg: its title and description (today's
// total and the peak), the fill patterns and the peak's label.
func writeRiskHead(b *strings.Builder, cur string, days []dayRisk, peak decimal.Decimal) {
	title := fmt.Sprintf("Money at risk in unresolved findings, %s, at the end of each of the last %d days, by kind", cur, len(days))
	lastTotal := decimal.Zero
	for _, v := range days[len(days)-1] {
		lastTotal = lastTotal.Add(v)
	}
	fmt.Fprintf(b, `<svg class="chart" role="img" aria-labelledby="risk-%[1]s-t risk-%[1]s-d" width="%[2]d" height="%[3]d" viewBox="0 0 %[2]d %[3]d" xmlns="http://www.w3.org/2000/svg">`,
		esc(cur), riskWidth, riskHeight)
	fmt.Fprintf(b, `<title id="risk-%s-t">%s</title>`, esc(cur), esc(title))
	fmt.Fprintf(b, `<desc id="risk-%s-d">Today %s at risk; the most in one day %s.</desc>`, esc(cur),
		esc(show(lastTotal, cur)), esc(show(peak, cur)))
	b.WriteString(`<defs>`)
	for _, p := range patterns {
		fmt.Fprintf(b, `<pattern id="p-%s" width="6" height="6" patternUnits="userSpaceOnUse">%s</pattern>`, p.id, p.svg)
	}
	b.WriteString(`</defs>`)
	fmt.Fprintf(b, `<text x="%d" y="11" font-size="11">%s at most</text>`, riskLeft, esc(show(peak, cur)))
}

// writeRiskBars draws the base line and, per day, a bar stacking its
// kinds in the legend's order, scaled to the peak, with a date under the
// first, middle and last bars.
func writeRiskBars(b *strings.Builder, cur string, first time.Time, days []dayRisk, kinds []ledger.Kind, peak decimal.Decimal, zone *time.Location) {
	group := func(k ledger.Kind) ledger.Kind {
		if slices.Contains(kinds, k) {
			return k
		}
		return otherKinds
	}
	base := riskTop + riskPlotH
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, riskLeft, base, riskLeft+len(days)*(riskBarW+riskGap), base)
	for i, d := range days {
		x := riskLeft + i*(riskBarW+riskGap)
		day := first.AddDate(0, 0, i).In(zone).Format("2006-01-02")
		y := float64(base)
		sums := map[ledger.Kind]decimal.Decimal{}
		for k, v := range d {
			g := group(k)
			sums[g] = sums[g].Add(v)
		}
		for ki, k := range kinds {
			v := sums[k]
			if !v.IsPositive() || !peak.IsPositive() {
				continue
			}
			h, _ := v.Div(peak).Mul(decimal.NewFromInt(riskPlotH)).Float64()
			y -= h
			fmt.Fprintf(b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="url(#p-%s)" stroke="#333" stroke-width="0.5"><title>%s: %s %s</title></rect>`,
				x, y, riskBarW, h, patterns[patternOf(ki, k == otherKinds)].id, esc(day), esc(string(k)), esc(show(v, cur)))
		}
		if i == 0 || i == len(days)/2 || i == len(days)-1 {
			fmt.Fprintf(b, `<text x="%d" y="%d" font-size="10">%s</text>`, x, base+13, esc(day))
		}
	}
}

// writeRiskLegend draws the legend: a swatch of each pattern and its kind.
func writeRiskLegend(b *strings.Builder, kinds []ledger.Kind) {
	base := riskTop + riskPlotH
	lx := riskLeft
	for ki, k := range kinds {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="10" fill="url(#p-%s)" stroke="#333" stroke-width="0.5"/>`,
			lx, base+22, patterns[patternOf(ki, k == otherKinds)].id)
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="10">%s</text>`, lx+13, base+31, esc(string(k)))
		lx += 16 + 6*len(string(k)) + 10
	}
}

// patternOf is the pattern of the kind at index i of the legend.
func patternOf(i int, other bool) int {
	if other {
		return len(patterns) - 1
	}
	return i
}

// ageBuckets are the ageing chart's buckets, in days since a finding was
// first seen: 0-1, 2-7, 8-30, more than 30.
var ageBuckets = []struct {
	label    string
	from, to int
}{{"0-1 days", 0, 1}, {"2-7 days", 2, 7}, {"8-30 days", 8, 30}, {"30+ days", 31, 1 << 30}}

// ageingChart draws how long the unresolved findings of fs have been open.
func ageingChart(fs []ledger.Finding, now time.Time) template.HTML {
	counts := make([]int, len(ageBuckets))
	for _, f := range fs {
		if f.Status == ledger.FindingResolved {
			continue
		}
		age := int(now.Sub(f.FirstSeenAt).Hours() / 24)
		for i, bk := range ageBuckets {
			if age >= bk.from && age <= bk.to {
				counts[i]++
				break
			}
		}
	}
	peak := slices.Max(counts)
	const (
		width, height = 300, 150
		barW, gap     = 56, 14
		base, plotH   = 118, 90
	)
	var b strings.Builder
	total := 0
	parts := make([]string, len(counts))
	for i, n := range counts {
		total += n
		parts[i] = fmt.Sprintf("%s: %d", ageBuckets[i].label, n)
	}
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-labelledby="age-t age-d" width="%[1]d" height="%[2]d" viewBox="0 0 %[1]d %[2]d" xmlns="http://www.w3.org/2000/svg">`,
		width, height)
	fmt.Fprintf(&b, `<title id="age-t">Age of the %d unresolved findings, since first seen</title>`, total)
	fmt.Fprintf(&b, `<desc id="age-d">%s.</desc>`, esc(strings.Join(parts, "; ")))
	fmt.Fprintf(&b, `<line x1="8" y1="%d" x2="%d" y2="%d" stroke="#333"/>`, base, 8+len(counts)*(barW+gap), base)
	for i, n := range counts {
		x := 8 + i*(barW+gap)
		h := 0
		if peak > 0 {
			h = n * plotH / peak
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#777" stroke="#333" stroke-width="0.5"><title>%s</title></rect>`,
			x, base-h, barW, h, esc(parts[i]))
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="middle">%d</text>`, x+barW/2, base-h-3, n)
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" text-anchor="middle">%s</text>`, x+barW/2, base+13, esc(ageBuckets[i].label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// matchChart draws the share of each run's transactions it linked to an
// intent, oldest run first.
func matchChart(runs []ledger.Run, zone func(string) *time.Location) template.HTML {
	var done []ledger.Run
	for _, r := range runs {
		if r.State == ledger.RunFinished && r.Counts.Transactions > 0 {
			done = append(done, r)
		}
	}
	slices.SortFunc(done, func(a, b ledger.Run) int { return cmp.Compare(a.ID, b.ID) })
	const (
		width, height = 320, 150
		barW, gap     = 8, 2
		base, plotH   = 118, 100
		left          = 34
	)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" role="img" aria-labelledby="match-t match-d" width="%[1]d" height="%[2]d" viewBox="0 0 %[1]d %[2]d" xmlns="http://www.w3.org/2000/svg">`,
		width, height)
	fmt.Fprintf(&b, `<title id="match-t">Share of each run's transactions matched to an intent, the last %d runs</title>`, len(done))
	desc := "No finished run with transactions."
	if len(done) > 0 {
		l := done[len(done)-1]
		desc = fmt.Sprintf("Last run %d: %d%% (%d of %d).", l.ID, l.Counts.Matched*100/l.Counts.Transactions, l.Counts.Matched, l.Counts.Transactions)
	}
	fmt.Fprintf(&b, `<desc id="match-d">%s</desc>`, esc(desc))
	for _, tick := range []int{0, 50, 100} {
		y := base - tick*plotH/100
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#ccc"/>`, left, y, width-4, y)
		fmt.Fprintf(&b, `<text x="2" y="%d" font-size="10">%d%%</text>`, y+3, tick)
	}
	for i, r := range done {
		pct := r.Counts.Matched * 100 / r.Counts.Transactions
		h := pct * plotH / 100
		x := left + 2 + i*(barW+gap)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#777" stroke="#333" stroke-width="0.5"><title>run %d, %s %s: %d%% (%d of %d)</title></rect>`,
			x, base-h, barW, h, r.ID, esc(r.Provider), esc(r.From.In(zone(r.Provider)).Format("2006-01-02")), pct, r.Counts.Matched, r.Counts.Transactions)
	}
	if len(done) > 0 {
		l := done[len(done)-1]
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11">last: %d%%</text>`, left, base+14, l.Counts.Matched*100/l.Counts.Transactions)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func esc(s string) string { return html.EscapeString(s) }

// show renders a sum of cur for people.
func show(v decimal.Decimal, cur string) string {
	return ledger.ShowAmount(money.Amount{Value: v, Currency: cur})
}

// chartsOf are the findings page's charts, over the findings chartFindings
// reads (of the page's provider, all statuses) and the last runs.
type chartsOf struct {
	Risk   []template.HTML
	Ageing template.HTML
	Match  template.HTML
}

// chartFindingsLimit bounds the findings the charts read.
const chartFindingsLimit = 20000

// charts reads what the findings page's charts show and draws them.
func (c *Console) charts(r context.Context, provider string, zone *time.Location, zones map[string]*time.Location) (chartsOf, error) {
	fs, err := c.deps.Store.ListFindings(r, ledger.FindingFilter{Provider: provider, Limit: chartFindingsLimit})
	if err != nil {
		return chartsOf{}, err
	}
	runs, err := c.deps.Store.ListRuns(r, provider, 30)
	if err != nil {
		return chartsOf{}, err
	}
	now := c.deps.Clock()
	return chartsOf{Risk: riskCharts(fs, now, zone), Ageing: ageingChart(fs, now),
		Match: matchChart(runs, func(p string) *time.Location {
			if z := zones[p]; z != nil {
				return z
			}
			return time.UTC
		})}, nil
}
