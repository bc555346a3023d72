package schedule

import (
	"testing"
	"time"
	_ "time/tzdata" // the zones do not depend on the machine
)

var eat = time.FixedZone("EAT", 3*3600)

func TestParseCron(t *testing.T) {
	t.Parallel()
	s, err := ParseCron("CRON_TZ=Africa/Nairobi 30 2 * * *")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // 03:00 in Nairobi
	if got, want := s.Next(from), time.Date(2026, 11, 2, 23, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Fatalf("next = %s, want %s (02:30 Nairobi)", got, want)
	}
	if s, err := ParseCron("*/5 * * * * *"); err != nil || !s.Next(from).Equal(from.Add(5*time.Second)) {
		t.Fatalf("seconds field: %v", err)
	}
	for _, bad := range []string{"61 * * * *", "every day", "CRON_TZ=Mars/Olympus 0 0 * * *", ""} {
		if _, err := ParseCron(bad); err == nil {
			t.Errorf("ParseCron(%q) accepted", bad)
		}
	}
}

func TestNext(t *testing.T) {
	t.Parallel()
	c, err := ParseCron("CRON_TZ=Africa/Nairobi 30 2 * * *")
	if err != nil {
		t.Fatal(err)
	}
	s := Spec{Cron: c, Zone: eat}
	next := s.Next(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
	if got, want := s.Local(next), "2026-11-03T02:30:00+03:00"; got != want {
		t.Fatalf("next = %s, want %s", got, want)
	}
}

func TestWindows(t *testing.T) {
	t.Parallel()
	day := Spec{Zone: eat, Lookback: 2}
	// 02:30 Nairobi on 3 Nov: the previous local day closed at 21:00 UTC on 2 Nov.
	at := time.Date(2026, 11, 2, 23, 30, 0, 0, time.UTC)
	got := day.Closed(at)
	want := []Window{
		{time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 21, 0, 0, 0, time.UTC)},
		{time.Date(2026, 10, 31, 21, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 21, 0, 0, 0, time.UTC)},
		{time.Date(2026, 10, 30, 21, 0, 0, 0, time.UTC), time.Date(2026, 10, 31, 21, 0, 0, 0, time.UTC)},
	}
	if len(got) != len(want) {
		t.Fatalf("closed = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("closed[%d] = %s, want %s", i, got[i], want[i])
		}
	}
	hourly := Spec{Size: time.Hour, CatchUp: 3}
	missed := hourly.Missed(time.Date(2026, 11, 2, 5, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC))
	if len(missed) != 3 || missed[0].From.Hour() != 6 || missed[2].To.Hour() != 9 {
		t.Fatalf("missed = %v", missed)
	}
	if m := hourly.Missed(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)); len(m) != 0 {
		t.Fatalf("nothing missed, got %v", m)
	}
	if err := (Spec{Size: 7 * time.Hour}).Validate(); err == nil {
		t.Fatal("a 7h window was accepted")
	}
	// Days of 23 hours (daylight saving) still align to local midnight.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	w := Spec{Zone: ny}.Containing(time.Date(2026, 3, 8, 12, 0, 0, 0, ny))
	if w.To.Sub(w.From) != 23*time.Hour {
		t.Fatalf("spring-forward day = %s", w.To.Sub(w.From))
	}
	// Windows shorter than a day would overlap across a clock change.
	if err := (Spec{Zone: ny, Size: 6 * time.Hour}).Validate(); err == nil {
		t.Fatal("6h windows in a zone with daylight saving were accepted")
	}
	if err := (Spec{Zone: eat, Size: 6 * time.Hour}).Validate(); err != nil {
		t.Fatalf("6h windows in Nairobi: %v", err)
	}
}
