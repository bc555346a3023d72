package quicktime

import (
	"math/rand/v2"
	"testing"
	"time"
	_ "time/tzdata" // zones with daylight saving, wherever the test runs
)

// exactForm says whether s has a digit wherever layout has one and
// layout's byte elsewhere.
func exactForm(layout, s string) bool {
	if len(s) != len(layout) {
		return false
	}
	for i := 0; i < len(s); i++ {
		isDigit := layout[i] >= '0' && layout[i] <= '9'
		if isDigit != (s[i] >= '0' && s[i] <= '9') || !isDigit && s[i] != layout[i] {
			return false
		}
	}
	return true
}

// TestParseAgreesWithTime holds Parse to time.ParseInLocation: on random
// strings of the forms' shape (every field at and beyond its range, leap
// days, stray characters) Parse either declines or returns exactly what
// time.ParseInLocation returns, and it never declines a time of the exact
// form (no space-padded hour, no fraction) that time.ParseInLocation
// accepts.
func TestParseAgreesWithTime(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	zones := []*time.Location{time.UTC, time.FixedZone("EAT", 3*3600), time.FixedZone("X", -(5*3600 + 30*60))}
	for _, name := range []string{"America/New_York", "Europe/London", "Australia/Lord_Howe"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		zones = append(zones, loc)
	}
	two := func(max int) string {
		n := rng.IntN(max)
		return string([]byte{byte('0' + n/10%10), byte('0' + n%10)})
	}
	year := func() string {
		switch rng.IntN(4) {
		case 0:
			return []string{"2000", "1900", "2024", "2023", "2100", "0000", "9999", "1999", "2400"}[rng.IntN(9)]
		default:
			n := rng.IntN(10000)
			return string([]byte{byte('0' + n/1000), byte('0' + n/100%10), byte('0' + n/10%10), byte('0' + n%10)})
		}
	}
	accepted := 0
	for range 200000 {
		d, m, y, hh, mm, ss := two(33), two(14), year(), two(26), two(62), two(62)
		layout, s := DayFirst, d+"-"+m+"-"+y+" "+hh+":"+mm+":"+ss
		if rng.IntN(2) == 0 {
			layout, s = YearFirst, y+"-"+m+"-"+d+" "+hh+":"+mm+":"+ss
		}
		if rng.IntN(8) == 0 { // a stray byte anywhere
			b := []byte(s)
			b[rng.IntN(len(b))] = " -:/.T+0a9\xff"[rng.IntN(11)]
			s = string(b)
		}
		if rng.IntN(20) == 0 {
			s = s[:rng.IntN(len(s))] + s[rng.IntN(len(s)):]
		}
		loc := zones[rng.IntN(len(zones))]
		got, ok := Parse(layout, s, loc)
		want, err := time.ParseInLocation(layout, s, loc)
		if ok {
			accepted++
			if err != nil || !got.Equal(want) || got.Location() != want.Location() || got.String() != want.String() {
				t.Fatalf("Parse(%q, %q) = %v, time.ParseInLocation = %v, %v", layout, s, got, want, err)
			}
		} else if err == nil && exactForm(layout, s) {
			t.Fatalf("Parse(%q, %q) declined what time.ParseInLocation reads as %v", layout, s, want)
		}
	}
	// Times a daylight-saving change skips or repeats.
	for _, s := range []string{"2024-03-10 02:30:00", "2024-11-03 01:30:00", "2024-03-31 01:30:00", "2024-10-27 01:30:00",
		"2024-04-07 01:45:00", "2024-10-06 02:15:00"} {
		for _, loc := range zones {
			d := s[8:10] + "-" + s[5:7] + "-" + s[0:4] + s[10:]
			for layout, v := range map[string]string{YearFirst: s, DayFirst: d} {
				got, ok := Parse(layout, v, loc)
				want, err := time.ParseInLocation(layout, v, loc)
				if !ok || err != nil || got.String() != want.String() {
					t.Fatalf("Parse(%q, %q, %s) = %v, %v; time.ParseInLocation = %v, %v", layout, v, loc, got, ok, want, err)
				}
			}
		}
	}
	if accepted < 10000 {
		t.Fatalf("only %d accepted: the test does not exercise Parse", accepted)
	}
	if _, ok := Parse("2006-01-02T15:04:05", "2024-03-01T00:00:00", time.UTC); ok {
		t.Fatal("Parse read a layout it does not know")
	}
}
