package console

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
)

// The findings list: its filter (with a search by receipt, phone, invoice
// reference or intent key), its export as CSV, and the acknowledgement or
// resolution of several findings at once with one note.

func (c *Console) listRoutes() {
	c.mux.HandleFunc("GET /console/findings.csv", c.findingsCSV)
	c.mux.HandleFunc("POST /console/findings/bulk", c.operator(c.bulk))
}

// parseFindingsForm reads the list's filter from q, given the providers'
// zones and accounts (Deps.Accounts): the form as shown, the filter, the
// zone its dates are read in, and the problems found.
func parseFindingsForm(q url.Values, zones map[string]*time.Location, accounts map[string][]string) (filterForm, ledger.FindingFilter, *time.Location, []string) {
	form := filterForm{Status: q.Get("status"), Provider: q.Get("provider"), Account: strings.TrimSpace(q.Get("account")), Kind: q.Get("kind"), From: q.Get("from"), To: q.Get("to"),
		Run: q.Get("run"), Q: strings.TrimSpace(q.Get("q"))}
	var problems []string
	f := ledger.FindingFilter{Limit: 1000}
	statuses, ok := statusChoices[form.Status]
	if !ok {
		problems = append(problems, fmt.Sprintf("status %q: choose one from the list", form.Status))
	}
	f.Statuses = statuses
	zone := time.UTC
	if form.Provider != "" {
		z, ok := zones[form.Provider]
		if !ok {
			problems = append(problems, fmt.Sprintf("provider %q: unknown provider", form.Provider))
		} else {
			f.Provider, zone = form.Provider, z
		}
	}
	switch {
	case form.Account != "" && f.Provider == "":
		problems = append(problems, "account: choose its provider too")
	case form.Account != "":
		if a, err := ledger.ParseAccount(form.Account, accounts[f.Provider]); err != nil {
			problems = append(problems, fmt.Sprintf("account: %v", err))
		} else {
			f.Accounts = []string{a}
		}
	}
	if form.Kind != "" {
		if !slices.Contains(ledger.Kinds, ledger.Kind(form.Kind)) {
			problems = append(problems, fmt.Sprintf("kind %q: unknown kind", form.Kind))
		} else {
			f.Kinds = []ledger.Kind{ledger.Kind(form.Kind)}
		}
	}
	for _, d := range []struct {
		name, v string
		dst     *time.Time
	}{{"from", form.From, &f.From}, {"to", form.To, &f.To}} {
		if d.v == "" {
			continue
		}
		t, err := time.ParseInLocation("2006-01-02", d.v, zone)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %q: want a date, YYYY-MM-DD", d.name, d.v))
			continue
		}
		*d.dst = t
	}
	if form.Run != "" {
		n, err := strconv.ParseInt(form.Run, 10, 64)
		if err != nil || n <= 0 {
			problems = append(problems, fmt.Sprintf("run %q: want a run number", form.Run))
		}
		f.RunID = n
	}
	if len(form.Q) > 200 {
		problems = append(problems, "search: at most 200 characters")
	}
	return form, f, zone, problems
}

// listFindings lists the findings of f that match the search q.
func (c *Console) listFindings(ctx context.Context, f ledger.FindingFilter, q string) ([]ledger.Finding, error) {
	if q != "" {
		f.Limit = 10000 // the search narrows what is listed
	}
	list, err := c.deps.Store.ListFindings(ctx, f)
	if err != nil || q == "" {
		return list, err
	}
	return findingsSearch(ctx, c.deps.Store, list, q)
}

// SearchStore is what the search reads besides the findings; a
// ledger.Store has it.
type SearchStore interface {
	GetIntents(ctx context.Context, keys []string) ([]ledger.Intent, error)
	GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error)
}

// findingsSearch keeps the findings of list that q names: by a provider
// transaction (a receipt) or the finding's id, by the customer's phone or
// e-mail in any form (full, masked as the books keep it, or local:
// 0712340342) as the finding, its intent or its transactions name them, by
// the reference of its intent or transactions (an invoice number, in
// normal form: spaces, dashes and case aside), or by (part of) its intent
// key.
func findingsSearch(ctx context.Context, s SearchStore, list []ledger.Finding, q string) ([]ledger.Finding, error) {
	q = strings.TrimSpace(q)
	norm := ledger.NormalReference(q)
	lower := strings.ToLower(q)
	keys := map[string]bool{}
	txns := map[string][]string{}
	for _, f := range list {
		if f.IntentKey != "" {
			keys[f.IntentKey] = true
		}
		txns[f.Provider] = append(txns[f.Provider], f.ProviderTxnIDs...)
	}
	// What the intents (by key) and the transactions (by provider/id) say
	// of their reference and their customer.
	type named struct{ ref, customer string }
	of := map[string]named{}
	ins, err := s.GetIntents(ctx, slices.Sorted(maps.Keys(keys)))
	if err != nil {
		return nil, fmt.Errorf("console: search intents: %w", err)
	}
	for _, in := range ins {
		of[in.Key] = named{ledger.NormalReference(in.Reference), in.Customer}
	}
	for _, p := range slices.Sorted(maps.Keys(txns)) {
		ts, err := s.GetProviderTxns(ctx, p, txns[p])
		if err != nil {
			return nil, fmt.Errorf("console: search %s transactions: %w", p, err)
		}
		for _, t := range ts {
			of[p+"/"+t.ID] = named{ledger.NormalReference(t.Reference), t.Counterparty}
		}
	}
	names := func(n named) bool {
		return (norm != "" && n.ref == norm) || ledger.SameCustomer(q, n.customer)
	}
	out := list[:0:0]
	for _, f := range list {
		match := strings.EqualFold(f.ID, q) || ledger.SameCustomer(q, f.Counterparty) ||
			(lower != "" && strings.Contains(strings.ToLower(f.IntentKey), lower)) ||
			slices.ContainsFunc(f.ProviderTxnIDs, func(id string) bool { return strings.EqualFold(id, q) })
		if !match {
			n, ok := of[f.IntentKey]
			match = (f.IntentKey != "" && ok && names(n)) ||
				slices.ContainsFunc(f.ProviderTxnIDs, func(id string) bool { return names(of[f.Provider+"/"+id]) })
		}
		if match {
			out = append(out, f)
		}
	}
	return out, nil
}

// showFindings renders the findings page for the filter q, with what a
// bulk action did.
func (c *Console) showFindings(w http.ResponseWriter, r *http.Request, q url.Values, status int, done string, refused []string) {
	ctx := r.Context()
	zones, err := c.deps.Providers(ctx)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	form, f, zone, problems := parseFindingsForm(q, zones, c.deps.Accounts)
	var list []ledger.Finding
	if len(problems) > 0 {
		status = http.StatusUnprocessableEntity
	} else if list, err = c.listFindings(ctx, f, form.Q); err != nil {
		c.internal(w, r, err)
		return
	}
	charts, err := c.charts(ctx, f.Provider, zone, zones)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	c.render(w, r, status, "findings", map[string]any{"Title": "Findings", "Form": form, "Problems": problems,
		"Findings": list, "Totals": totals(list), "Zones": zones, "Providers": slices.Sorted(maps.Keys(zones)),
		"Kinds": ledger.Kinds, "Statuses": []string{"open", "acknowledged", "resolved", "all"}, "Query": filterQuery(form),
		"Export": exportURL(form), "Accounts": accountChoices(c.deps.Accounts),
		"Charts": charts, "Done": done, "Refused": refused, "Once": c.formToken()})
}

// filterQuery is the form as a query string, for the export link and the
// way back from a bulk action.
func filterQuery(f filterForm) string {
	q := url.Values{}
	for k, v := range map[string]string{"status": f.Status, "provider": f.Provider, "account": f.Account, "kind": f.Kind, "from": f.From, "to": f.To,
		"run": f.Run, "q": f.Q} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

// exportURL is the link to the CSV of the list the form filters: a URL the
// page trusts, its query encoded here.
func exportURL(f filterForm) template.URL {
	if q := filterQuery(f); q != "" {
		return template.URL("/console/findings.csv?" + q)
	}
	return "/console/findings.csv"
}

// findingsCSV exports the filtered list as `findings list --format csv`
// prints it.
func (c *Console) findingsCSV(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	zones, err := c.deps.Providers(ctx)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	form, f, _, problems := parseFindingsForm(r.URL.Query(), zones, c.deps.Accounts)
	if len(problems) > 0 {
		c.fail(w, r, userOf(r), http.StatusUnprocessableEntity, "The filter is wrong: "+strings.Join(problems, "; ")+".")
		return
	}
	list, err := c.listFindings(ctx, f, form.Q)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="findings.csv"`)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := report.WriteFindingsIn(w, report.CSV, list, zones); err != nil {
		c.deps.Logger.Error("console: findings csv", "error", err)
	}
}

// maxBulk bounds the findings one bulk action decides.
const maxBulk = 200

// bulkOnce is the apply-once identity of a bulk decision on one finding:
// the form's token (one per rendering of the list) and the finding. A
// form sent again (reloaded, resubmitted) changes nothing more.
func bulkOnce(token, id string) string { return "web-bulk:" + token + ":" + id }

// validFormToken reports whether s can be a token of randomToken's.
func validFormToken(s string) bool {
	if len(s) < 16 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// bulk acknowledges or resolves the findings checked on the list with one
// note, each through the findings service in a transaction of its own and
// once per form (bulkOnce); it shows the list again with what was done and
// what was refused.
func (c *Console) bulk(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		c.fail(w, r, userOf(r), http.StatusBadRequest, "The form could not be read.")
		return
	}
	back, _ := url.ParseQuery(r.PostFormValue("back"))
	verb, ok := findings.ParseVerb(r.PostFormValue("action"))
	if !ok || (verb != findings.Acknowledge && verb != findings.Resolve) {
		c.showFindings(w, r, back, http.StatusUnprocessableEntity, "", []string{"Choose Acknowledge or Resolve."})
		return
	}
	ids := r.PostForm["id"]
	switch {
	case len(ids) == 0:
		c.showFindings(w, r, back, http.StatusUnprocessableEntity, "", []string{"Check the findings to act on."})
		return
	case len(ids) > maxBulk:
		c.showFindings(w, r, back, http.StatusUnprocessableEntity, "", []string{fmt.Sprintf("At most %d findings at once.", maxBulk)})
		return
	}
	token := r.PostFormValue("once")
	if !validFormToken(token) {
		c.showFindings(w, r, back, http.StatusUnprocessableEntity, "", []string{"The form is out of date: check the findings again and send it."})
		return
	}
	note := r.PostFormValue("note")
	if err := (findings.Decision{Verb: verb, FindingID: ids[0], Actor: c.actor(r), Note: note}).Check(); err != nil {
		msg := "Refused: " + err.Error() + "."
		if errors.Is(err, findings.ErrNoteRequired) {
			msg = "Write a note: say what was done or why."
		}
		c.showFindings(w, r, back, http.StatusUnprocessableEntity, "", []string{msg})
		return
	}
	var refused []string
	n, repeats := 0, 0
	for _, id := range ids {
		out, err := c.deps.Findings.Decide(r.Context(), findings.Decision{Verb: verb, FindingID: id, Actor: c.actor(r), Note: note,
			Once: bulkOnce(token, id)})
		switch {
		case err == nil && out.Repeat:
			repeats++
		case err == nil:
			n++
		case errors.Is(err, ledger.ErrNotFound):
			refused = append(refused, id+": no such finding")
		case errors.Is(err, ledger.ErrConflict):
			refused = append(refused, fmt.Sprintf("%s: it is %s", id, out.Finding.Status))
		default:
			c.internal(w, r, err)
			return
		}
	}
	what := map[findings.Verb]string{findings.Acknowledge: "acknowledged", findings.Resolve: "resolved"}[verb]
	status := http.StatusOK
	if len(refused) > 0 {
		status = http.StatusConflict
	}
	done := fmt.Sprintf("%d finding(s) %s.", n, what)
	if repeats > 0 {
		done += fmt.Sprintf(" %d already %s by this form before: sent again, it changes nothing.", repeats, what)
	}
	c.showFindings(w, r, back, status, done, refused)
}

// accountChoice is an account the findings filter offers.
type accountChoice struct{ Value, Label string }

// accountChoices are the configured accounts besides the default ones, by
// provider; none when no provider has several.
func accountChoices(accounts map[string][]string) []accountChoice {
	var out []accountChoice
	for _, p := range slices.Sorted(maps.Keys(accounts)) {
		for _, a := range accounts[p] {
			out = append(out, accountChoice{Value: a, Label: a + " (" + p + ")"})
		}
	}
	return out
}
