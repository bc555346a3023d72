package ledgertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// exercisePullRegistrations covers the record of short codes registered
// for pulling: absent until recorded, read back as written, replaced by a
// registration made again, kept per provider and short code, rolled back
// with its transaction, and refused when incomplete or when it would keep
// a whole phone number.
func exercisePullRegistrations(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.GetPullRegistration(ctx, "mpesa", "174379"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("never registered: %v, want ErrNotFound", err)
	}
	first := ledger.PullRegistration{Provider: "mpesa", ShortCode: "174379", RegisteredAt: T0.Add(123456 * time.Nanosecond),
		By: "cli:alice", CallbackURL: "https://pay.example.com/daraja/[path token]/c2b/confirmation",
		NominatedNumber: "2547****0000", ResponseRef: "ref-1", Status: "1000", Description: "Service request successful"}
	if err := s.RecordPullRegistration(ctx, first); err != nil {
		t.Fatal(err)
	}
	want := first
	want.RegisteredAt = T0.Add(123 * time.Microsecond) // times keep microseconds
	got, err := s.GetPullRegistration(ctx, "mpesa", "174379")
	if err != nil || got != want {
		t.Fatalf("read back:\n got %+v (%v)\nwant %+v", got, err, want)
	}
	if got.RegisteredAt.Location() != time.UTC {
		t.Errorf("registered_at in %s, want UTC", got.RegisteredAt.Location())
	}

	again := ledger.PullRegistration{Provider: "mpesa", ShortCode: "174379", RegisteredAt: T0.Add(time.Hour), By: "serve:host-1",
		CallbackURL: "https://other.example.com/c2b", NominatedNumber: "2547****1111", ResponseRef: "ref-2", Status: "1001",
		Description: "Short code already registered"}
	if err := s.RecordPullRegistration(ctx, again); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetPullRegistration(ctx, "mpesa", "174379"); err != nil || got != again {
		t.Fatalf("registered again:\n got %+v (%v)\nwant %+v", got, err, again)
	}

	// Another short code, and the same short code of another provider, are
	// records of their own.
	other := again
	other.ShortCode, other.ResponseRef = "600000", "ref-3"
	if err := s.RecordPullRegistration(ctx, other); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetPullRegistration(ctx, "mpesa", "174379"); err != nil || got.ResponseRef != "ref-2" {
		t.Errorf("174379 after 600000 was recorded: %+v (%v)", got, err)
	}
	if _, err := s.GetPullRegistration(ctx, "stripe", "174379"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("another provider's short code: %v, want ErrNotFound", err)
	}

	// A registration recorded in a transaction that rolls back is not kept.
	boom := errors.New("boom")
	err = s.InTx(ctx, func(tx ledger.Tx) error {
		r := first
		r.ShortCode = "700000"
		if err := tx.RecordPullRegistration(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.GetPullRegistration(ctx, "mpesa", "700000"); err != nil {
			t.Errorf("read own write: %v", err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v", err)
	}
	if _, err := s.GetPullRegistration(ctx, "mpesa", "700000"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("rolled back registration: %v, want ErrNotFound", err)
	}

	for _, c := range []struct {
		field string
		edit  func(*ledger.PullRegistration)
	}{
		{"provider", func(r *ledger.PullRegistration) { r.Provider = " " }},
		{"short_code", func(r *ledger.PullRegistration) { r.ShortCode = "" }},
		{"registered_at", func(r *ledger.PullRegistration) { r.RegisteredAt = time.Time{} }},
		{"by", func(r *ledger.PullRegistration) { r.By = "" }},
		{"nominated_number", func(r *ledger.PullRegistration) { r.NominatedNumber = "254712340845" }},
	} {
		r := first
		r.ShortCode = "800000"
		c.edit(&r)
		err := s.RecordPullRegistration(ctx, r)
		var fe *ledger.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a field error on it", c.field, err)
		}
	}
	if _, err := s.GetPullRegistration(ctx, "mpesa", "800000"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("a refused registration was recorded: %v", err)
	}
}
