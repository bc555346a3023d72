package console

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

var t0 = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

type fakeJobs struct{ retried []int64 }

func (f *fakeJobs) Discarded(context.Context, int) ([]Job, error) {
	return []Job{{ID: 41, Kind: "alerts.deliver", State: "discarded", Subject: "7", Attempt: 10, MaxAttempts: 10,
		When: t0.Add(3 * time.Hour), LastError: "slack: channel_not_found"}}, nil
}

func (f *fakeJobs) Retry(_ context.Context, id int64) (Job, error) {
	if id != 41 {
		return Job{}, errors.New("job not found")
	}
	f.retried = append(f.retried, id)
	return Job{ID: id, State: "available"}, nil
}

type bundle struct {
	store        ledger.Store
	srv          *httptest.Server
	console      *Console
	jobs         *fakeJobs
	dup, unknown string
	kept, row    int64
	replayed     []int64
}

// setup seeds a small M-Pesa day at fixed times and serves the console in
// proxy mode: ops@example.com operates, view@example.com views.
func setup(t *testing.T, newStore func(testing.TB) ledger.Store) *bundle {
	t.Helper()
	ctx := context.Background()
	s := newStore(t)
	b := &bundle{store: s, jobs: &fakeJobs{}}
	kes := func(v string) money.Amount {
		a, err := money.Parse(v, "KES")
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	_, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "charge:order-4471", Provider: "mpesa",
		Amount: kes("1500"), Customer: "254712340845", Reference: "ORDER4471"}, CreatedAt: at(-10)})
	must(err)
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "charge:order-4471", Owner: "w1", Lease: time.Minute, Now: at(-9)})
	must(err)
	att, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: in.Key, ClaimToken: in.ClaimToken, Now: at(-9)})
	must(err)
	_, err = s.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: att.ID, ProviderRef: "ws_CO_0211", Outcome: ledger.OutcomeSucceeded, Now: at(-8)})
	must(err)
	for i, id := range []string{"SKL1AAAA01", "SKL1AAAA02"} {
		_, err = s.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
			Amount: kes("1500"), OccurredAt: at(-8 + i), Reference: "ORDER4471", Counterparty: "2547****0845"},
			ledger.Source{Channel: "c2b_confirmation", Ref: id, ReceivedAt: at(-7 + i),
				Raw: []byte(`{"TransID":"` + id + `","MSISDN":"254712340845","FirstName":"<script>alert(1)</script>"}`)})
		must(err)
	}
	from := time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC)
	run, err := s.ClaimRun(ctx, ledger.RunClaim{Provider: "mpesa", From: from, To: from.Add(24 * time.Hour), Owner: "test", Lease: time.Hour, Now: at(120)})
	must(err)
	dup := ledger.Finding{ID: ledger.FindingID(ledger.KindDuplicateCharge, "charge:order-4471", []string{"SKL1AAAA01", "SKL1AAAA02"}),
		Kind: ledger.KindDuplicateCharge, Severity: ledger.SeverityHigh, Provider: "mpesa", IntentKey: "charge:order-4471",
		ProviderTxnIDs: []string{"SKL1AAAA01", "SKL1AAAA02"}, Expected: kes("1500"), Actual: kes("3000"), AtRisk: kes("1500"),
		Counterparty: "2547****0845", Detail: "2 successful charges for one intent", OccurredAt: at(-8)}
	unknown := ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{"SKL2BBBB01"}), Kind: ledger.KindUnknownCharge,
		Severity: ledger.SeverityMedium, Provider: "mpesa", ProviderTxnIDs: []string{"SKL2BBBB01"}, Actual: kes("250"), AtRisk: kes("250"),
		Detail: "charge links to no intent", OccurredAt: at(24 * 60),
		Suggestion: ledger.Suggestion{FindingID: "f_0123456789abcdef0123", IntentKey: "charge:order-4471", TxnID: "SKL2BBBB01",
			Reason: "same amount and currency; same customer 2547****0845"}}
	_, err = s.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "mpesa", ID: "SKL2BBBB01", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: kes("250"), OccurredAt: at(24 * 60), Reference: "ORDER 4417", Counterparty: "2547****0845"},
		ledger.Source{Channel: "statement", Ref: "s.csv:4", ReceivedAt: at(24*60 + 1)})
	must(err)
	_, err = s.UpsertFindings(ctx, []ledger.Finding{dup, unknown}, run.ID, at(121))
	must(err)
	_, err = s.FinishRun(ctx, ledger.RunFinish{ID: run.ID, Owner: "test", State: ledger.RunFinished, Now: at(122),
		Counts: ledger.RunCounts{Intents: 1, Transactions: 3, Matched: 1, Findings: 2, New: 2}})
	must(err)
	_, err = s.UpdateFinding(ctx, ledger.FindingUpdate{ID: dup.ID, To: ledger.FindingAcknowledged, Note: "calling the customer", Now: at(130),
		Actor: ledger.Actor{Name: "alice", Surface: ledger.SurfaceCLI}})
	must(err)
	b.dup, b.unknown = dup.ID, unknown.ID
	b.kept, err = s.AddQuarantine(ctx, ledger.QuarantineItem{Source: "mpesa_callback", Origin: "http 196.201.214.200 /stk", Field: "body",
		Reason: "unexpected end of JSON input", Raw: []byte(`{"Body":{"MSISDN":"254712340845"`), At: at(30)})
	must(err)
	b.row, err = s.AddQuarantine(ctx, ledger.QuarantineItem{Source: "intents_csv", Origin: "in.csv", Line: 3, Field: "amount",
		Reason: "12.345: more decimal places than the currency allows", Raw: []byte("k,mpesa,12.345,KES"), At: at(31)})
	must(err)

	nairobi, err := time.LoadLocation("Africa/Nairobi")
	must(err)
	c, err := New(Config{Mode: ModeProxy, UserHeader: "X-Forwarded-Email", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Operators: []string{"ops@example.com"}, Viewers: []string{"view@example.com"}},
		Deps{Store: s, Jobs: b.jobs, Clock: func() time.Time { return t0.Add(5 * time.Hour) },
			Findings: findings.NewService(s, findings.Options{Clock: func() time.Time { return t0.Add(5 * time.Hour) }}),
			Providers: func(context.Context) (map[string]*time.Location, error) {
				return map[string]*time.Location{"mpesa": nairobi}, nil
			},
			Replay: func(_ context.Context, q ledger.QuarantineItem) (string, error) {
				if q.Source != "mpesa_callback" {
					return "", errors.New("a row of an intents file cannot be replayed alone")
				}
				b.replayed = append(b.replayed, q.ID)
				return "stk callback, 1 new transaction(s)", nil
			}})
	must(err)
	c.formToken = func() string { return "form-token-0123456789" }
	b.console = c
	b.srv = httptest.NewServer(c.Handler())
	t.Cleanup(b.srv.Close)
	return b
}

type page struct {
	status int
	body   string
	loc    string
}

func (b *bundle) get(t *testing.T, who, path string) page {
	t.Helper()
	return b.do(t, who, http.MethodGet, path, nil, nil)
}

func (b *bundle) post(t *testing.T, who, path string, form url.Values, hdr map[string]string) page {
	t.Helper()
	return b.do(t, who, http.MethodPost, path, form, hdr)
}

func (b *bundle) do(t *testing.T, who, method, path string, form url.Values, hdr map[string]string) page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if who != "" {
		req.Header.Set("X-Forwarded-Email", who)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, body: string(raw), loc: resp.Header.Get("Location")}
}

const (
	ops    = "ops@example.com"
	viewer = "view@example.com"
)

// TestPagesGolden renders every page on both engines: the same books give
// the same pages, byte for byte.
func TestPagesGolden(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, e.New)
			for _, c := range []struct {
				name, who, path string
			}{
				{"findings", ops, "/console/findings"},
				{"findings_filtered", viewer, "/console/findings?status=all&provider=mpesa&kind=unknown_charge&from=2026-11-03&to=2026-11-04"},
				{"finding_operator", ops, "/console/findings/" + b.dup},
				{"finding_viewer", viewer, "/console/findings/" + b.dup},
				{"finding_unknown", ops, "/console/findings/" + b.unknown},
				{"runs", viewer, "/console/runs"},
				{"findings_of_run", viewer, "/console/findings?status=all&run=1"},
				{"quarantine", ops, "/console/quarantine"},
				{"jobs", ops, "/console/jobs"},
			} {
				p := b.get(t, c.who, c.path)
				if p.status != http.StatusOK {
					t.Fatalf("%s: %d\n%s", c.path, p.status, p.body)
				}
				golden.Assert(t, "testdata/"+c.name+".html.golden", p.body)
			}
			if p := b.get(t, ops, "/console/findings?provider=paypal"); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "provider &#34;paypal&#34;: unknown provider") {
				t.Fatalf("unknown provider: %d\n%s", p.status, p.body)
			}
			if p := b.get(t, ops, "/console/findings/f_nope"); p.status != http.StatusNotFound {
				t.Fatalf("missing finding: %d", p.status)
			}
		})
	}
}

func historyOf(t *testing.T, s ledger.Store, id string) string {
	t.Helper()
	evs, err := s.FindingHistory(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Action)+" "+ev.Who()+" "+string(ev.Surface)+" "+ev.Note)
	}
	return strings.Join(out, "|")
}

// TestActions acts through the forms: operators act and are recorded, a
// viewer and a cross-site form are refused and change nothing.
func TestActions(t *testing.T) {
	t.Parallel()
	b := setup(t, dbtest.Postgres)
	before := historyOf(t, b.store, b.dup)
	note := url.Values{"note": {"refunded SKL1AAAA02"}}
	if p := b.post(t, viewer, "/console/findings/"+b.dup+"/resolve", note, nil); p.status != http.StatusForbidden {
		t.Fatalf("viewer resolve: %d", p.status)
	}
	if p := b.post(t, ops, "/console/findings/"+b.dup+"/resolve", note, map[string]string{"Sec-Fetch-Site": "cross-site"}); p.status != http.StatusForbidden {
		t.Fatalf("cross-site resolve: %d", p.status)
	}
	if p := b.post(t, ops, "/console/findings/"+b.dup+"/resolve", note, map[string]string{"Origin": "https://evil.example"}); p.status != http.StatusForbidden {
		t.Fatalf("foreign origin resolve: %d", p.status)
	}
	if got := historyOf(t, b.store, b.dup); got != before {
		t.Fatalf("refused actions changed the history:\n%s\nwas\n%s", got, before)
	}
	if p := b.post(t, ops, "/console/findings/"+b.dup+"/resolve", url.Values{}, nil); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.body, "Write a note") {
		t.Fatalf("resolve without note: %d", p.status)
	}
	if p := b.post(t, ops, "/console/findings/"+b.dup+"/resolve", note, map[string]string{"Sec-Fetch-Site": "same-origin"}); p.status != http.StatusSeeOther ||
		p.loc != "/console/findings/"+b.dup {
		t.Fatalf("resolve: %d %q", p.status, p.loc)
	}
	if p := b.post(t, ops, "/console/findings/"+b.dup+"/ack", url.Values{}, nil); p.status != http.StatusConflict {
		t.Fatalf("ack of resolved: %d", p.status)
	}
	if p := b.post(t, ops, "/console/findings/"+b.dup+"/reopen", url.Values{"note": {"refund bounced"}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("reopen: %d", p.status)
	}
	if p := b.post(t, ops, "/console/findings/"+b.dup+"/note", url.Values{"note": {"second refund sent"}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("note: %d", p.status)
	}
	want := "opened run 1 run |acknowledged alice cli calling the customer|resolved ops@example.com web refunded SKL1AAAA02|" +
		"reopened ops@example.com web refund bounced|noted ops@example.com web second refund sent"
	if got := historyOf(t, b.store, b.dup); got != want {
		t.Fatalf("history:\n%s\nwant\n%s", got, want)
	}

	// Quarantine and jobs.
	if p := b.post(t, ops, "/console/quarantine/"+itoa(b.row)+"/dismiss", url.Values{}, nil); p.status != http.StatusUnprocessableEntity {
		t.Fatalf("dismiss without note: %d", p.status)
	}
	if p := b.post(t, ops, "/console/quarantine/"+itoa(b.row)+"/replay", url.Values{}, nil); p.status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.body, "cannot be replayed alone") {
		t.Fatalf("replay of a row: %d", p.status)
	}
	if p := b.post(t, viewer, "/console/quarantine/"+itoa(b.row)+"/dismiss", url.Values{"note": {"x"}}, nil); p.status != http.StatusForbidden {
		t.Fatalf("viewer dismiss: %d", p.status)
	}
	if p := b.post(t, ops, "/console/quarantine/"+itoa(b.row)+"/dismiss", url.Values{"note": {"fixed and imported again"}}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("dismiss: %d", p.status)
	}
	if p := b.post(t, ops, "/console/quarantine/"+itoa(b.kept)+"/replay", url.Values{}, nil); p.status != http.StatusSeeOther || len(b.replayed) != 1 {
		t.Fatalf("replay: %d %v", p.status, b.replayed)
	}
	if p := b.post(t, ops, "/console/quarantine/"+itoa(b.kept)+"/replay", url.Values{}, nil); p.status != http.StatusConflict || len(b.replayed) != 1 {
		t.Fatalf("replay twice: %d %v", p.status, b.replayed)
	}
	evs, err := b.store.QuarantineHistory(context.Background(), b.row)
	if err != nil || len(evs) != 1 || evs[0].Actor != ops || evs[0].Surface != ledger.SurfaceWeb || evs[0].Action != ledger.ActionDismissed {
		t.Fatalf("quarantine history: %+v, %v", evs, err)
	}
	if p := b.post(t, viewer, "/console/jobs/41/retry", url.Values{}, nil); p.status != http.StatusForbidden || len(b.jobs.retried) != 0 {
		t.Fatalf("viewer retry: %d", p.status)
	}
	if p := b.post(t, ops, "/console/jobs/41/retry", url.Values{}, nil); p.status != http.StatusSeeOther || len(b.jobs.retried) != 1 {
		t.Fatalf("retry: %d", p.status)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestSignIn checks who gets in: the proxy's header only from the trusted
// proxies, known people only; local mode only on loopback.
func TestSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t, dbtest.SQLite)
	if p := b.get(t, "", "/console/findings"); p.status != http.StatusUnauthorized {
		t.Fatalf("no user: %d", p.status)
	}
	if p := b.get(t, "mallory@example.com", "/console/findings"); p.status != http.StatusForbidden {
		t.Fatalf("no role: %d", p.status)
	}
	req := httptest.NewRequest(http.MethodGet, "/console/findings", nil)
	req.RemoteAddr = "10.1.2.3:5555"
	req.Header.Set("X-Forwarded-Email", ops)
	rec := httptest.NewRecorder()
	b.console.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("header from an untrusted address: %d", rec.Code)
	}
	if p := b.get(t, ops, "/console/"); p.status != http.StatusSeeOther || p.loc != "/console/findings" {
		t.Fatalf("root: %d %q", p.status, p.loc)
	}

	local, err := New(Config{Mode: ModeLocal, LocalUser: "amina"}, b.console.deps)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		remote, host string
		want         int
	}{{"127.0.0.1:4000", "127.0.0.1:8080", 200}, {"[::1]:4000", "localhost:8080", 200},
		{"192.168.1.9:4000", "127.0.0.1:8080", 403}, {"127.0.0.1:4000", "rebind.example:8080", 403}} {
		req := httptest.NewRequest(http.MethodGet, "/console/runs", nil)
		req.RemoteAddr, req.Host = c.remote, c.host
		rec := httptest.NewRecorder()
		local.Handler().ServeHTTP(rec, req)
		if rec.Code != c.want || (c.want == 200 && !strings.Contains(rec.Body.String(), "amina (operator)")) {
			t.Errorf("local from %s to %s: %d, want %d", c.remote, c.host, rec.Code, c.want)
		}
	}
	for _, bad := range []Config{{Mode: ModeLocal}, {Mode: ModeProxy, UserHeader: "X"}, {Mode: "oidc"}} {
		if _, err := New(bad, b.console.deps); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
