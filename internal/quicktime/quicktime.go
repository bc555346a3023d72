package quicktime

import "time"

// Layouts of the forms this package reads, as time.Parse spells them.
const (
	DayFirst  = "02-01-2006 15:04:05"
	YearFirst = "2006-01-02 15:04:05"
)

// Parse reads s in loc when it has exactly the form of layout (DayFirst or
// YearFirst) and is a valid time: then it returns what
// time.ParseInLocation(layout, s, loc) returns, and true. Otherwise it
// returns false (and time.ParseInLocation may still accept s, e.g. with a
// fraction of a second, or give the reason it does not).
func Parse(layout, s string, loc *time.Location) (time.Time, bool) {
	if len(s) != len(DayFirst) || s[10] != ' ' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	var year, month, day int
	switch layout {
	case DayFirst:
		if s[2] != '-' || s[5] != '-' {
			return time.Time{}, false
		}
		day, month, year = num(s[0:2]), num(s[3:5]), num(s[6:10])
	case YearFirst:
		if s[4] != '-' || s[7] != '-' {
			return time.Time{}, false
		}
		year, month, day = num(s[0:4]), num(s[5:7]), num(s[8:10])
	default:
		return time.Time{}, false
	}
	hour, minute, second := num(s[11:13]), num(s[14:16]), num(s[17:19])
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, second, 0, loc), true
}

// num is the value of a string of ASCII digits, or -1.
func num(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// daysIn is the number of days of month in year (proleptic Gregorian, as
// package time counts).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
