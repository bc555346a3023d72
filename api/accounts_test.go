package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

// TestIntentsOfAnAccount: an intent names its provider account; one the
// provider does not have is refused naming the field, and the same key in
// another account is another request.
func TestIntentsOfAnAccount(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			store := e.New(t)
			svc := charge.New(charge.Deps{Store: store, Chargers: map[string]providers.Charger{"mpesa": &fake.Charger{},
				"mpesa@600639": &fake.Charger{}}}, charge.Config{})
			q, err := queue.New(store, queue.Config{})
			if err != nil {
				t.Fatal(err)
			}
			svc.UseQueue(q)
			mux := http.NewServeMux()
			New(Config{Token: "tok_test_123456", Store: store, Charges: svc, Accounts: map[string][]string{"mpesa": {"600639"}}}).Routes(mux)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			body := func(account string) string {
				return `{"provider":"mpesa","account":"` + account + `","amount":"1500.00","currency":"KES","customer":"254712340845"}`
			}
			if code, out, _ := post(t, srv, "charge:branch-1", body("600639")); code != http.StatusCreated || !strings.Contains(out, `"account":"600639"`) {
				t.Fatalf("an intent of account 600639: %d %s", code, out)
			}
			if code, out, _ := post(t, srv, "charge:main-1", body("default")); code != http.StatusCreated || strings.Contains(out, `"account"`) {
				t.Fatalf("an intent of the default account: %d %s", code, out)
			}
			if code, out, _ := post(t, srv, "charge:other-1", body("600640")); code != http.StatusUnprocessableEntity && code != http.StatusBadRequest ||
				!strings.Contains(out, `"account"`) || !strings.Contains(out, "600640") {
				t.Fatalf("an intent of an account not configured: %d %s", code, out)
			}
			if code, out, _ := post(t, srv, "charge:branch-1", body("")); code != http.StatusConflict && code != http.StatusUnprocessableEntity {
				t.Fatalf("the same key in another account: %d %s", code, out)
			}
		})
	}
}
