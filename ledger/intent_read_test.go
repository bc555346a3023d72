package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/money"
)

func readRow(t *testing.T, line int, amount string) ImportIntent {
	var a money.Amount
	if amount != "" {
		var err error
		if a, err = money.Parse(amount, "KES"); err != nil {
			t.Fatal(err)
		}
	}
	return ImportIntent{Line: line, NewIntent: NewIntent{IntentParams: IntentParams{Key: fmt.Sprintf("k%d", line),
		Provider: "mpesa", Amount: a}, CreatedAt: time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)}}
}

// TestReadImportIntents: the rows come in batches of the given size,
// normalised and prepared, an invalid row refused and left out.
func TestReadImportIntents(t *testing.T) {
	t.Parallel()
	rows := func(yield func(ImportIntent) bool) {
		for i := range 7 {
			amount := "10"
			if i == 3 {
				amount = "" // invalid
			}
			if !yield(readRow(t, i+2, amount)) {
				return
			}
		}
	}
	rd := ReadImportIntents(rows, 2, func(r ImportIntent) (string, error) { return r.Key + "/" + string(r.State), nil })
	defer rd.Stop()
	var got [][]string
	for {
		b, ok, err := rd.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, slices.Clone(b))
		rd.Release(b) // read into again
	}
	rd.Stop()
	n, refused, err := rd.Result()
	if want := "[[k2/pending k3/pending] [k4/pending k6/pending] [k7/pending k8/pending]]"; fmt.Sprint(got) != want {
		t.Fatalf("batches %v, want %s", got, want)
	}
	var fe *FieldError
	if n != 7 || err != nil || len(refused) != 1 || refused[0].Line != 5 || !errors.As(refused[0].Err, &fe) {
		t.Fatalf("rows %d, refused %v, err %v", n, refused, err)
	}
}

// TestReadImportIntentsStops: an error of prep stops the reading and is
// returned; a reader stopped early lets its rows go; a panic of the rows
// reaches the caller of Stop.
func TestReadImportIntentsStops(t *testing.T) {
	t.Parallel()
	endless := func(yield func(ImportIntent) bool) {
		for i := 0; ; i++ {
			if !yield(readRow(t, i+2, "10")) {
				return
			}
		}
	}
	boom := errors.New("boom")
	rd := ReadImportIntents(endless, 4, func(r ImportIntent) (int, error) {
		if r.Line == 9 {
			return 0, boom
		}
		return r.Line, nil
	})
	for {
		_, ok, err := rd.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
	}
	rd.Stop()
	if _, _, err := rd.Result(); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}

	rd = ReadImportIntents(endless, 4, func(r ImportIntent) (int, error) { return r.Line, nil })
	if _, ok, _ := rd.Next(context.Background()); !ok {
		t.Fatal("no batch")
	}
	rd.Stop() // returns: the reading goroutine is told to stop

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rd = ReadImportIntents(endless, 4, func(r ImportIntent) (int, error) { return r.Line, nil })
	var err error
	for range 1000 { // a batch ready as well may be taken first
		if _, _, err = rd.Next(ctx); err != nil {
			break
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Next after the context ended: %v", err)
	}
	rd.Stop()

	rd = ReadImportIntents(func(yield func(ImportIntent) bool) { panic("rows") }, 4,
		func(r ImportIntent) (int, error) { return r.Line, nil })
	for {
		if _, ok, _ := rd.Next(context.Background()); !ok {
			break
		}
	}
	defer func() {
		p, ok := recover().(*ReaderPanic)
		if !ok || p.Value != "rows" {
			t.Fatalf("recovered %v, want the rows' panic", p)
		}
		if !strings.Contains(string(p.Stack), "TestReadImportIntentsStops") {
			t.Fatalf("the panic's stack does not show the rows:\n%s", p.Stack)
		}
	}()
	rd.Stop()
	t.Fatal("no panic")
}
