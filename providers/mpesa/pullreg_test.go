package mpesa

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
)

// pullToken is the secret path token of the callback URL the tests
// register with.
const pullToken = "tok-0123456789abcdefghijklmnopqrstuv"

func setupRegistrar(t *testing.T, fake *mpesafake.Server, base string, clock func() time.Time) *Puller {
	t.Helper()
	short, _, key, secret := fake.Credentials()
	p, err := NewPuller(Config{BaseURL: base, ShortCode: short, ConsumerKey: key, ConsumerSecret: secret, Clock: clock},
		PullConfig{NominatedNumber: "254708374149", CallbackURL: "https://pay.example.com/daraja/" + pullToken + "/c2b/confirmation",
			CallbackSecret: pullToken})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPullNotRegistered: a pull for a short code Daraja does not know as
// registered fails with ErrNotRegistered, saying so and naming the command
// that registers it; once registered, the same pull works. A 400.002.02
// about another field is not read as a missing registration.
func TestPullNotRegistered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake, p, clock := setupPuller(t, 10)
	noop := func(providers.Sighting) error { return nil }
	err := p.Pull(ctx, clock.Now().Add(-time.Hour), clock.Now(), noop)
	if !errors.Is(err, ErrNotRegistered) {
		t.Fatalf("pull before registering: %v, want ErrNotRegistered", err)
	}
	for _, want := range []string{"short code 174379 is not registered for pulling",
		"register it with `reconcile providers register mpesa --force`", "400.002.02", "Invalid ShortCode"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if k := providers.KindOf(err); k != providers.Permanent {
		t.Errorf("kind %s, want permanent: pulling again cannot help", k)
	}
	if _, err := p.Register(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Pull(ctx, clock.Now().Add(-time.Hour), clock.Now(), noop); err != nil {
		t.Fatalf("pull once registered: %v", err)
	}
	fake.Inject(mpesafake.PathPullQuery, mpesafake.Fault{Status: http.StatusBadRequest, ErrorCode: "400.002.02",
		ErrorMessage: "Bad Request - Invalid StartDate"})
	err = p.Pull(ctx, clock.Now().Add(-time.Hour), clock.Now(), noop)
	if err == nil || errors.Is(err, ErrNotRegistered) || strings.Contains(err.Error(), "register") {
		t.Errorf("an invalid StartDate: %v, want an error that is not about registration", err)
	}
}

// TestRegisterRefusals: Daraja's refusals of a registration come back as
// errors naming the short code, and nothing is sent without a nominated
// number.
func TestRegisterRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := mpesafake.New(mpesafake.Config{Seed: 5})
	base := fake.Start()
	t.Cleanup(fake.Close)
	short, _, key, secret := fake.Credentials()
	cases := map[string]struct {
		short string
		pc    PullConfig
		want  string
	}{
		"no nominated number":    {short, PullConfig{CallbackURL: "https://pay.example.com/c2b"}, "no nominated number"},
		"a bad nominated number": {short, PullConfig{NominatedNumber: "12", CallbackURL: "https://pay.example.com/c2b"}, "Invalid NominatedNumber"},
		"another short code":     {"600000", PullConfig{NominatedNumber: "254708374149", CallbackURL: "https://x.example/c2b"}, "Invalid ShortCode"},
		"no callback URL":        {short, PullConfig{NominatedNumber: "254708374149"}, "Invalid CallBackURL"},
	}
	for name, c := range cases {
		p, err := NewPuller(Config{BaseURL: base, ShortCode: c.short, ConsumerKey: key, ConsumerSecret: secret}, c.pc)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Register(ctx)
		if err == nil || !strings.Contains(err.Error(), "pull register "+c.short) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", name, err, c.short, c.want)
		}
		if strings.Contains(fmtErr(err), "254708374149") {
			t.Errorf("%s: the error shows the nominated number: %v", name, err)
		}
	}
	if n := len(fake.Registrations()); n != 0 {
		t.Errorf("%d registrations accepted, want none", n)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestEnsureRegistered registers a short code once and records it in the
// books, on both engines: the record names who registered, when, the
// callback URL without its path token and the nominated number masked; a
// second call finds the record and asks Daraja nothing; force registers
// again (Daraja's 1001, already registered, is success) and replaces the
// record; a refusal records nothing.
func TestEnsureRegistered(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		store := newStore(t)
		clock := &fakeClock{now: time.Date(2024, 2, 7, 12, 0, 0, 0, time.UTC)}
		fake := mpesafake.New(mpesafake.Config{Seed: 7, Clock: clock.Now})
		base := fake.Start()
		t.Cleanup(fake.Close)
		p := setupRegistrar(t, fake, base, clock.Now)

		reg, asked, err := p.EnsureRegistered(ctx, store, "cli:alice", false)
		if err != nil || !asked {
			t.Fatalf("first registration: asked %v, %v", asked, err)
		}
		got := fake.Registrations()
		if len(got) != 1 || got[0].ShortCode != "174379" || got[0].NominatedNumber != "254708374149" ||
			got[0].CallbackURL != "https://pay.example.com/daraja/"+pullToken+"/c2b/confirmation" || got[0].Status != RegisteredNew {
			t.Fatalf("Daraja received %+v", got)
		}
		want := ledger.PullRegistration{Provider: "mpesa", ShortCode: "174379", RegisteredAt: clock.Now(), By: "cli:alice",
			CallbackURL: "https://pay.example.com/daraja/[path token]/c2b/confirmation", NominatedNumber: "2547****4149",
			ResponseRef: got[0].RefID, Status: RegisteredNew, Description: "Service request successful"}
		if reg != want {
			t.Errorf("returned\n %+v\nwant %+v", reg, want)
		}
		if stored, err := store.GetPullRegistration(ctx, "mpesa", "174379"); err != nil || stored != want {
			t.Errorf("recorded\n %+v (%v)\nwant %+v", stored, err, want)
		}

		clock.Add(time.Hour)
		again, asked, err := p.EnsureRegistered(ctx, store, "serve:host-1", false)
		if err != nil || asked || again != want {
			t.Errorf("second call: asked %v, %+v, %v; want the record as it was, Daraja not asked", asked, again, err)
		}
		if n := len(fake.Registrations()); n != 1 {
			t.Errorf("Daraja received %d registrations, want 1", n)
		}

		forced, asked, err := p.EnsureRegistered(ctx, store, "cli:bob", true)
		if err != nil || !asked || forced.Status != RegisteredAlready || forced.By != "cli:bob" ||
			!forced.RegisteredAt.Equal(clock.Now()) || forced.ResponseRef == want.ResponseRef {
			t.Errorf("forced: asked %v, %+v, %v; want Daraja's 1001 recorded by cli:bob now", asked, forced, err)
		}
		if stored, err := store.GetPullRegistration(ctx, "mpesa", "174379"); err != nil || stored != forced {
			t.Errorf("after force the books hold %+v (%v), want %+v", stored, err, forced)
		}

		// A short code Daraja refuses is not recorded.
		_, _, key, secret := fake.Credentials()
		bad, err := NewPuller(Config{BaseURL: base, ShortCode: "600000", ConsumerKey: key, ConsumerSecret: secret, Clock: clock.Now},
			PullConfig{NominatedNumber: "254708374149", CallbackURL: "https://pay.example.com/c2b"})
		if err != nil {
			t.Fatal(err)
		}
		if _, asked, err := bad.EnsureRegistered(ctx, store, "cli:alice", false); err == nil || !asked {
			t.Errorf("a refused short code: asked %v, %v; want an error", asked, err)
		}
		if _, err := store.GetPullRegistration(ctx, "mpesa", "600000"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("a refused registration was recorded: %v", err)
		}
	})
}
