package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reconcilehq/reconcile/api"
	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/mpesa"
	"github.com/reconcilehq/reconcile/providers/stripe"
	"github.com/reconcilehq/reconcile/queue"
)

// badInput is one entry of the hostile-input catalogue: a value an outsider
// may send in place of an amount, an identifier or a date.
type badInput struct {
	name   string
	amount string // replaces the amount when set
	text   string // replaces an identifier (key, reference, customer) when set
	y9999  bool   // dates the record in the year 9999
}

var catalogue = []badInput{
	{name: "absurd amount", amount: "1000000000000000000000000000000"},
	{name: "100000-digit amount", amount: strings.Repeat("9", 100000)},
	{name: "year 9999", y9999: true},
	{name: "NUL", text: "INV\x00X"},
	{name: "invalid UTF-8", text: "INV\xffX"},
	{name: "terminal escape", text: "INV\x1b]0;owned\x07\x1b[2J"},
	{name: "bidi override", text: "INV\u202eX"},
	{name: "10 MB field", text: strings.Repeat("A", 10<<20)},
}

const (
	hostileToken  = "0123456789abcdef0123456789abcdef"
	hostileWhsec  = "whsec_test_hostile_0123456789"
	safaricomAddr = "196.201.214.200:43210"
)

// jsonText quotes s as a JSON string the way a hostile sender would: control
// characters escaped (else the document is not JSON at all), every other
// byte as it is, invalid UTF-8 included.
func jsonText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (b badInput) amountOr(good string) string {
	if b.amount != "" {
		return b.amount
	}
	return good
}

func (b badInput) textOr(good string) string {
	if b.text != "" {
		return b.text
	}
	return good
}

func csvOf(t *testing.T, rows ...[]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func intentsCSV(t *testing.T, b badInput) []byte {
	created := "2024-02-06T09:30:00Z"
	if b.y9999 {
		created = "9999-02-06T09:30:00Z"
	}
	return csvOf(t, []string{"key", "provider", "amount", "currency", "status", "created_at"},
		[]string{"k-good", "mpesa", "10", "KES", "succeeded", "2024-02-06T09:00:00Z"},
		[]string{"k-" + b.textOr("bad"), "mpesa", b.amountOr("10"), "KES", "succeeded", created})
}

func mpesaStatement(t *testing.T, b badInput) []byte {
	at := "06-02-2024 17:52:04"
	if b.y9999 {
		at = "06-02-9999 17:52:04"
	}
	return csvOf(t, []string{"Receipt No.", "Completion Time", "Initiation Time", "Details", "Transaction Status", "Paid In",
		"Withdrawn", "Balance", "Balance Confirmed", "Reason Type", "Other Party Info", "Linked Transaction ID", "A/C No."},
		[]string{"SB62A1SVRK", "06-02-2024 17:50:04", "06-02-2024 17:50:04", "Pay Bill", "Completed", "1000.00", "", "16100.00",
			"true", "Pay Bill Online", "2547****0845 - PETER K", "", "INV-1001"},
		[]string{"SB62A1SVRL", at, at, "Pay Bill", "Completed", b.amountOr("1000.00"), "", "17100.00", "true", "Pay Bill Online",
			"2547****0845 - PETER K", "", b.textOr("INV-1002")})
}

func stripeReport(t *testing.T, b badInput) []byte {
	at := "2024-11-23 14:05:06"
	if b.y9999 {
		at = "9999-11-23 14:05:06"
	}
	return csvOf(t, []string{"balance_transaction_id", "created_utc", "currency", "gross", "fee", "net", "reporting_category",
		"source_id", "charge_id", "payment_intent_id", "payment_metadata[intent_key]"},
		[]string{"txn_good1", "2024-11-23 14:00:00", "usd", "1.00", "0.00", "1.00", "charge", "ch_good1", "ch_good1", "pi_good1", "charge:good"},
		[]string{"txn_bad1", at, "usd", b.amountOr("1.00"), "0.00", b.amountOr("1.00"), "charge", "ch_bad1", "ch_bad1", "pi_bad1",
			b.textOr("charge:bad")})
}

// bankConfig configures a CSV statement of a bank, a provider of its own.
const bankConfig = `statements:
  - provider: bank
    id: id
    time: time
    time_format: "2006-01-02 15:04:05"
    zone: UTC
    amount: amount
    fixed_currency: KES
    reference: reference
`

func bankStatement(t *testing.T, b badInput) []byte {
	at := "2024-02-06 10:00:00"
	if b.y9999 {
		at = "9999-02-06 10:00:00"
	}
	return csvOf(t, []string{"id", "time", "amount", "reference"},
		[]string{"B1", "2024-02-06 09:00:00", "10.00", "INV-1"},
		[]string{"B2", at, b.amountOr("10.00"), b.textOr("INV-2")})
}

func c2bBody(b badInput) []byte {
	at := "20240206063845"
	if b.y9999 {
		at = "99990206063845"
	}
	return []byte(`{"TransactionType":"Pay Bill","TransID":"SB6BAD0001","TransTime":"` + at + `","TransAmount":"` +
		b.amountOr("10") + `","BusinessShortCode":"600638","BillRefNumber":` + jsonText(b.textOr("invoice008")) +
		`,"MSISDN":"25470****149","FirstName":"John"}`)
}

func stripeEvent(b badInput) []byte {
	created := "1732370704"
	if b.y9999 {
		created = "253402300799"
	}
	return []byte(`{"id":"evt_bad1","object":"event","api_version":"2026-03-25.dahlia","created":1732370705,"data":{"object":` +
		`{"id":"ch_bad1","object":"charge","amount":` + b.amountOr("1050") + `,"amount_captured":1050,"amount_refunded":0,` +
		`"captured":true,"created":` + created + `,"currency":"usd","metadata":{"intent_key":` + jsonText(b.textOr("charge:bad")) +
		`},"paid":true,"payment_intent":"pi_bad1","refunded":false,"status":"succeeded"}},"livemode":false,"type":"charge.succeeded"}`)
}

// hostileEnv is one engine with every input path: the command line, the
// intents API, the M-Pesa callback endpoints and the Stripe webhook.
type hostileEnv struct {
	url   string
	store ledger.Store
	mux   *http.ServeMux
}

func newHostileEnv(t *testing.T, url string) hostileEnv {
	t.Helper()
	ctx := context.Background()
	store, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"mpesa": &fake.Charger{}}}, charge.Config{})
	q, err := queue.New(store, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc.UseQueue(q)
	logger := slog.New(slog.DiscardHandler)
	mux := http.NewServeMux()
	api.New(api.Config{Token: "tok_test_123456", Store: store, Charges: svc, Logger: logger,
		Findings: findings.NewService(store, findings.Options{})}).Routes(mux)
	proc := &intake.Processor{Store: store, Logger: logger}
	mh, err := mpesa.NewHandler(mpesa.HandlerConfig{PathToken: hostileToken, Quarantine: store}, proc, logger)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle(mh.Pattern(), mh)
	sh, err := stripe.NewWebhookHandler(stripe.WebhookConfig{Secrets: []string{hostileWhsec}, Receiver: proc, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("POST /webhooks/stripe", sh)
	return hostileEnv{url: url, store: store, mux: mux}
}

func (e hostileEnv) serve(req *http.Request) (int, string) {
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// books counts what the ledger holds: intents and provider transactions
// of every provider, at any time.
func (e hostileEnv) books(t *testing.T) (intents, txns int) {
	t.Helper()
	ctx := context.Background()
	from, to := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{"mpesa", "stripe", "bank"} {
		if err := e.store.ScanIntents(ctx, ledger.IntentFilter{Provider: p, From: from, To: to}, func(*ledger.IntentRow) error {
			intents++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := e.store.ScanProviderTxns(ctx, ledger.TxnFilter{Provider: p, From: from, To: to}, func(*ledger.TxnRow) error {
			txns++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return intents, txns
}

func (e hostileEnv) quarantine(t *testing.T) []ledger.QuarantineItem {
	t.Helper()
	items, err := e.store.ListQuarantine(context.Background(), "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// hostilePath is one input path: it sends b and reports whether it was
// refused, and what the sender saw.
type hostilePath struct {
	name string
	// skip names inputs a path has no place for (the API has no date).
	skip func(badInput) bool
	send func(t *testing.T, e hostileEnv, b badInput) (refused bool, said string)
	// quarantined is false for a refusal that keeps nothing: an unsigned
	// Stripe body too large to verify.
	quarantined func(badInput) bool
}

func cliFile(t *testing.T, e hostileEnv, content []byte, args ...string) (bool, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(file, content, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, append(append(args, file), "--database-url", e.url)...)
	return code == 1, out + errOut
}

var hostilePaths = []hostilePath{
	{name: "intents csv", send: func(t *testing.T, e hostileEnv, b badInput) (bool, string) {
		return cliFile(t, e, intentsCSV(t, b), "import", "intents")
	}},
	{name: "mpesa statement", send: func(t *testing.T, e hostileEnv, b badInput) (bool, string) {
		return cliFile(t, e, mpesaStatement(t, b), "import", "statement", "--provider", "mpesa")
	}},
	{name: "stripe report", send: func(t *testing.T, e hostileEnv, b badInput) (bool, string) {
		return cliFile(t, e, stripeReport(t, b), "import", "statement", "--provider", "stripe")
	}},
	{name: "configured csv statement", send: func(t *testing.T, e hostileEnv, b badInput) (bool, string) {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, []byte(bankConfig), 0o600); err != nil {
			t.Fatal(err)
		}
		return cliFile(t, e, bankStatement(t, b), "import", "statement", "--provider", "bank", "--config", cfg)
	}},
	{name: "callbacks file", send: func(t *testing.T, e hostileEnv, b badInput) (bool, string) {
		return cliFile(t, e, append(c2bBody(b), '\n'), "import", "callbacks", "--provider", "mpesa")
	}},
	{name: "POST /v1/intents", skip: func(b badInput) bool { return b.y9999 }, send: func(t *testing.T, e hostileEnv, b badInput) (bool, string) {
		body := `{"provider":"mpesa","amount":"` + b.amountOr("10") + `","currency":"KES","customer":` + jsonText(b.textOr("254712340845")) + `}`
		req := httptest.NewRequest(http.MethodPost, "/v1/intents", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok_test_123456")
		req.Header.Set("Idempotency-Key", "k-api-"+strings.ReplaceAll(b.name, " ", "-"))
		code, said := e.serve(req)
		want := http.StatusUnprocessableEntity
		if len(body) > api.MaxIntentBody {
			want = http.StatusRequestEntityTooLarge
		}
		return code == want && strings.Contains(said, `"field"`), said
	}, quarantined: func(badInput) bool { return false }},
	{name: "mpesa c2b over http", send: func(t *testing.T, e hostileEnv, b badInput) (bool, string) {
		req := httptest.NewRequest(http.MethodPost, "/daraja/"+hostileToken+"/c2b/confirmation", bytes.NewReader(c2bBody(b)))
		req.RemoteAddr = safaricomAddr
		code, said := e.serve(req)
		// Safaricom gets its acknowledgement once the body is stored;
		// refused means kept out of the books (checked by the caller).
		return code == http.StatusOK || code == http.StatusRequestEntityTooLarge, said
	}},
	{name: "stripe webhook", send: func(t *testing.T, e hostileEnv, b badInput) (bool, string) {
		body := stripeEvent(b)
		req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", bytes.NewReader(body))
		req.Header.Set("Stripe-Signature", webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body,
			Secret: hostileWhsec, Timestamp: time.Now()}).Header)
		code, said := e.serve(req)
		return code == http.StatusOK || code == http.StatusRequestEntityTooLarge, said
	}, quarantined: func(b badInput) bool { return len(stripeEvent(b)) <= 1<<20 }},
}

// TestHostileInputCatalogue sends every entry of the catalogue through every
// input path on both engines. Each is refused with the field named, kept in
// the quarantine (bounded, as valid text), changes nothing in the books, and
// never reaches the sender's terminal raw or whole; and a reconcile run of
// the window still completes.
func TestHostileInputCatalogue(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.EngineURLs() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			e := newHostileEnv(t, eng.URL(t))
			for _, p := range hostilePaths {
				for _, b := range catalogue {
					if p.skip != nil && p.skip(b) {
						continue
					}
					name := p.name + "/" + b.name
					intents, txns := e.books(t)
					before := len(e.quarantine(t))
					refused, said := p.send(t, e, b)
					if !refused {
						t.Errorf("%s: not refused: %s", name, ledger.SafeText(said, 300))
					}
					if len(said) > 32<<10 || strings.ContainsAny(said, "\x00\x1b\u202e") || !utf8.ValidString(said) {
						t.Errorf("%s: the sender saw %d bytes, raw: %s", name, len(said), ledger.SafeText(said, 300))
					}
					if i, x := e.books(t); i != intents || x != txns {
						t.Errorf("%s: the books changed: intents %d -> %d, transactions %d -> %d", name, intents, i, txns, x)
					}
					items := e.quarantine(t)
					if want := p.quarantined == nil || p.quarantined(b); want && len(items) <= before {
						t.Errorf("%s: nothing quarantined", name)
					}
					for _, q := range items[:len(items)-before] {
						checkQuarantined(t, name, q)
					}
				}
			}
			code, out, errOut := cli(t, "run", "--provider", "mpesa", "--from", "2024-02-01", "--to", "2024-03-01", "--no-pull",
				"--database-url", e.url)
			if code != 0 {
				t.Errorf("run after the catalogue: exit %d: %s %s", code, out, ledger.SafeText(errOut, 500))
			}

			// A record stored before the limits (planted behind the
			// ledger's back) does not stop the run: it is reported, once,
			// and the rest of the window is reconciled.
			in := filepath.Join(t.TempDir(), "ok.csv")
			if err := os.WriteFile(in, []byte("key,provider,amount,currency,status,created_at\n"+
				"k-old,mpesa,10,KES,succeeded,2024-02-06T09:00:00Z\nk-fine,mpesa,10,KES,succeeded,2024-02-06T10:00:00Z\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if code, _, errOut := cli(t, "import", "intents", in, "--database-url", e.url); code != 0 {
				t.Fatal(errOut)
			}
			ledgertest.Exec(t, e.store, `UPDATE intents SET amount = '1000000000000000000000000000000' WHERE key = 'k-old'`)
			for i := range 2 {
				code, out, errOut = cli(t, "run", "--provider", "mpesa", "--from", "2024-02-06", "--to", "2024-02-07", "--no-pull",
					"--format", "json", "--database-url", e.url)
				var rep struct {
					Findings []struct {
						Kind      string `json:"kind"`
						IntentKey string `json:"intent_key"`
					} `json:"findings"`
				}
				if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
					t.Fatalf("run %d with an unreadable record: exit %d: %v %s %s", i+1, code, err, out, ledger.SafeText(errOut, 500))
				}
				got := map[string]string{}
				for _, f := range rep.Findings {
					got[f.IntentKey] = f.Kind
				}
				if got["k-old"] != "unreadable_record" || got["k-fine"] != "missing_at_provider" || len(rep.Findings) != 2 {
					t.Errorf("run %d with an unreadable record: findings %v", i+1, got)
				}
			}
		})
	}
}

func checkQuarantined(t *testing.T, name string, q ledger.QuarantineItem) {
	t.Helper()
	for field, v := range map[string]string{"source": q.Source, "origin": q.Origin, "field": q.Field, "reason": q.Reason} {
		if !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\x1b\u202e") || len(v) > ledger.MaxQuarantineReason+256 {
			t.Errorf("%s: quarantine %s is %d bytes, raw: %s", name, field, len(v), ledger.SafeText(v, 200))
		}
	}
	if len(q.Raw) > ledger.MaxQuarantineRaw {
		t.Errorf("%s: quarantine kept %d raw bytes", name, len(q.Raw))
	}
}

// TestConfiguredMaxAmount: limits.max_amounts lowers a currency's maximum,
// and a bad maximum is refused at start with its key named.
func TestConfiguredMaxAmount(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("limits:\n  max_amounts:\n    KES: \"1000\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("key,provider,amount,currency,status,created_at\nk1,mpesa,1000.01,KES,succeeded,2024-02-06T09:00:00Z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "sqlite:" + filepath.Join(dir, "r.db")
	code, _, errOut := cli(t, "import", "intents", in, "--config", cfg, "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "line 2: field amount: KES 1000.01 is above the maximum of 1000.00") {
		t.Errorf("over the configured maximum: %d %s", code, errOut)
	}
	if err := os.WriteFile(cfg, []byte("limits:\n  max_amounts:\n    KES: \"1e30\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "import", "intents", in, "--config", cfg, "--database-url", url)
	if code != 2 && code != 1 || !strings.Contains(errOut, "config limits.max_amounts") {
		t.Errorf("a maximum above the ceiling: %d %s", code, errOut)
	}
	// Back to the defaults for the other tests of the process.
	if code, _, errOut := cli(t, "findings", "list", "--database-url", url); code != 0 {
		t.Fatal(errOut)
	}
}

// TestImportRefusesUnconfiguredProviders: an intents file, like the API,
// refuses intents of a provider the configuration does not know, final
// states included.
func TestImportRefusesUnconfiguredProviders(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(in, []byte("key,provider,amount,currency,status,created_at\n"+
		"k1,mpesa,10,KES,succeeded,2024-02-06T09:00:00Z\nk2,paypal,10,USD,succeeded,2024-02-06T09:00:00Z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cli(t, "import", "intents", in, "--database-url", dbtest.SQLiteURL(t))
	if code != 1 || !strings.Contains(errOut, `line 3: field provider: "paypal" is not a configured provider (configured: mpesa, stripe)`) {
		t.Errorf("%d %s", code, errOut)
	}
}
