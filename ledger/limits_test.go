package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

func TestSafeTextAndLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, text, line string }{
		{"plain key", "plain key", "plain key"},
		{"a\x1b[2Jb", `a\x1b[2Jb`, `a\x1b[2Jb`},
		{"nul\x00", `nul\x00`, `nul\x00`},
		{"bad\xffutf8", `bad\xffutf8`, `bad\xffutf8`},
		{"two\nlines\tcol", "two\nlines\tcol", `two\nlines\tcol`},
		{"bidi\u202eevil", `bidi\u202eevil`, `bidi\u202eevil`},
		{"c1\u009bcsi", `c1\u009bcsi`, `c1\u009bcsi`},
		{"café ✓", "café ✓", "café ✓"},
	} {
		if got := SafeText(tc.in, 0); got != tc.text {
			t.Errorf("SafeText(%q) = %q, want %q", tc.in, got, tc.text)
		}
		if got := SafeLine(tc.in, 0); got != tc.line {
			t.Errorf("SafeLine(%q) = %q, want %q", tc.in, got, tc.line)
		}
	}
	long := strings.Repeat("é", 1<<20)
	if got := SafeText(long, 100); len(got) > 140 || !strings.Contains(got, "(2097152 bytes in all)") {
		t.Errorf("SafeText of 2 MB = %d bytes: %q", len(got), got)
	}
	if got := Clip(strings.Repeat("x", 10<<20)); len(got) > 100 {
		t.Errorf("Clip of 10 MB = %d bytes", len(got))
	}
}

func TestLimits(t *testing.T) {
	amt := func(v, cur string) money.Amount {
		a, err := money.Parse(v, cur)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if err := CheckAmount(amt("10000000000000", "KES")); err != nil {
		t.Errorf("the default maximum refused: %v", err)
	}
	for _, a := range []money.Amount{amt("10000000000000.01", "KES"), amt("-10000000000000.01", "KES"),
		{Value: decimal.RequireFromString("1e30"), Currency: "KES"}, amt("1000000000000001", "JPY")} {
		if err := CheckAmount(a); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("CheckAmount(%s) = %v", a, err)
		}
	}
	for _, tm := range []time.Time{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2101, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(1, 0)} {
		if err := CheckTime(tm); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("CheckTime(%s) = %v", tm, err)
		}
	}
	if err := CheckTime(time.Date(2100, 12, 31, 23, 59, 59, 0, time.UTC)); err != nil {
		t.Error(err)
	}
	for _, s := range []string{"k\x00", "k\xff", "k\x1b[31m", "k\u202e", strings.Repeat("k", 256), "k\n", "k\u0085"} {
		if err := CheckText(s, MaxIDLen); err == nil {
			t.Errorf("CheckText(%q) accepted", s)
		}
	}
	// A configured maximum, per currency, within the ceiling.
	if err := SetMaxAmounts(map[string]decimal.Decimal{"kes": decimal.RequireFromString("1000000")}); err != nil {
		t.Fatal(err)
	}
	defer maxMinor.Store(nil)
	if err := CheckAmount(amt("1000000.01", "KES")); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("configured maximum not applied: %v", err)
	}
	if err := CheckAmount(amt("1000000.01", "USD")); err != nil {
		t.Errorf("another currency's maximum applied: %v", err)
	}
	for _, bad := range []map[string]decimal.Decimal{{"KES": decimal.RequireFromString("1e16")}, {"XXX": decimal.NewFromInt(1)},
		{"KES": decimal.NewFromInt(-1)}, {"KES": decimal.RequireFromString("0.001")}} {
		if err := SetMaxAmounts(bad); err == nil {
			t.Errorf("SetMaxAmounts(%v) accepted", bad)
		}
	}
}

func TestQuarantineBounded(t *testing.T) {
	t.Parallel()
	raw := []byte(strings.Repeat("A", 10<<20))
	q := QuarantineItem{Source: "intents_csv", Origin: "in\x00.csv", Field: "key\xff", Reason: strings.Repeat("r", 10<<20), Raw: raw}.Bounded()
	if len(q.Raw) != MaxQuarantineRaw || len(q.Reason) > MaxQuarantineReason+200 ||
		!strings.Contains(q.Reason, "first 65536 of 10485760 bytes kept, sha256 ") {
		t.Errorf("raw %d bytes, reason %d bytes: %q", len(q.Raw), len(q.Reason), q.Reason[len(q.Reason)-150:])
	}
	if q.Origin != `in\x00.csv` || q.Field != `key\xff` {
		t.Errorf("origin %q field %q", q.Origin, q.Field)
	}
	err := &ParseError{File: "f.csv", Line: 2, Field: "amount", Err: errors.New(strings.Repeat("9", 10<<20))}
	if n := len(err.Error()); n > 1200 {
		t.Errorf("ParseError of a 10 MB value is %d bytes", n)
	}
}
