package console

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
)

// The month-end close in the console: /console/close shows the close
// report of a month (report.BuildClose, as `reconcile report close` prints
// it), and operators record the close with a note (report.RecordClose).

func (c *Console) closeRoutes() {
	c.mux.HandleFunc("GET /console/close", c.closePage)
	c.mux.HandleFunc("POST /console/close", c.operator(c.closeMonth))
}

// closeForm is the month and provider the page shows.
type closeForm struct {
	Period, Provider string
}

func (c *Console) closeForm(r *http.Request) closeForm {
	f := closeForm{Period: r.FormValue("period"), Provider: r.FormValue("provider")}
	if f.Period == "" {
		// The month before this one: the one to close.
		now := c.deps.Clock().UTC()
		f.Period = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -1, 0).Format("2006-01")
	}
	return f
}

func (c *Console) closePage(w http.ResponseWriter, r *http.Request) {
	c.showClose(w, r, http.StatusOK, "", "")
}

// showClose renders the close report of the month the request names, with
// a problem or what was done.
func (c *Console) showClose(w http.ResponseWriter, r *http.Request, status int, problem, done string) {
	ctx := r.Context()
	form := c.closeForm(r)
	zones, err := c.deps.Providers(ctx)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	data := map[string]any{"Title": "Month-end close", "Form": form, "Providers": slices.Sorted(maps.Keys(zones)), "Problem": problem,
		"Done": done}
	var problems []string
	if _, err := ledger.ParsePeriod(form.Period); err != nil {
		problems = append(problems, fmt.Sprintf("month %q: want YYYY-MM", form.Period))
	}
	if form.Provider != "" {
		z, ok := zones[form.Provider]
		if !ok {
			problems = append(problems, fmt.Sprintf("provider %q: unknown provider", form.Provider))
		}
		zones = map[string]*time.Location{form.Provider: z}
	}
	if len(problems) > 0 {
		data["Problems"] = problems
		c.render(w, r, http.StatusUnprocessableEntity, "close", data)
		return
	}
	rep, err := report.BuildClose(ctx, c.deps.Store, report.CloseParams{Period: form.Period, Providers: zones, Provider: form.Provider,
		Accounts: c.deps.Accounts, Now: c.deps.Clock()})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	data["Report"], data["NotReady"] = rep, report.NotReady(rep)
	zoneOf := map[string]*time.Location{}
	for _, s := range rep.Sections {
		zoneOf[s.Provider] = zones[s.Provider]
	}
	data["Zones"], data["UTC"] = zoneOf, time.UTC
	c.render(w, r, status, "close", data)
}

// closeMonth records the close of the month the form names.
func (c *Console) closeMonth(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	form := c.closeForm(r)
	zones, err := c.deps.Providers(ctx)
	if err != nil {
		c.internal(w, r, err)
		return
	}
	if form.Provider != "" {
		z, ok := zones[form.Provider]
		if !ok {
			c.showClose(w, r, http.StatusUnprocessableEntity, "There is no such provider.", "")
			return
		}
		zones = map[string]*time.Location{form.Provider: z}
	}
	if _, err := ledger.ParsePeriod(form.Period); err != nil {
		c.showClose(w, r, http.StatusUnprocessableEntity, "Name the month, YYYY-MM.", "")
		return
	}
	rep, err := report.BuildClose(ctx, c.deps.Store, report.CloseParams{Period: form.Period, Providers: zones, Provider: form.Provider,
		Accounts: c.deps.Accounts, Now: c.deps.Clock()})
	if err != nil {
		c.internal(w, r, err)
		return
	}
	force, _ := strconv.ParseBool(r.PostFormValue("force"))
	_, err = report.RecordClose(ctx, c.deps.Store, rep, report.CloseBy{Actor: c.actor(r), Note: r.PostFormValue("note"), Force: force,
		Now: c.deps.Clock()})
	var (
		nr *report.NotReadyError
		fe *ledger.FieldError
	)
	switch {
	case errors.As(err, &nr):
		c.showClose(w, r, http.StatusConflict, "Not closed: "+nr.Why+". Run those days, or close it anyway.", "")
	case errors.As(err, &fe):
		c.showClose(w, r, http.StatusUnprocessableEntity, "Write a note: say what was checked.", "")
	case errors.Is(err, report.ErrClosed):
		c.showClose(w, r, http.StatusConflict, "The month is closed already.", "")
	case err != nil:
		c.internal(w, r, err)
	default:
		q := url.Values{"period": {form.Period}}
		if form.Provider != "" {
			q.Set("provider", form.Provider)
		}
		http.Redirect(w, r, "/console/close?"+q.Encode(), http.StatusSeeOther)
	}
}
