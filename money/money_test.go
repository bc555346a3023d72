package money

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, cur  string
		want     string
		wantErr  error
		wantCode bool
	}{
		{in: "1500", cur: "KES", want: "KES 1500.00"},
		{in: "12.5", cur: "kes", want: "KES 12.50"},
		{in: "-4000.00", cur: "KES", want: "KES -4000.00"},
		{in: "12.345", cur: "KES", wantErr: ErrTooPrecise},
		{in: "12.340", cur: "KES", want: "KES 12.34"},
		{in: "100", cur: "JPY", want: "JPY 100"},
		{in: "100.5", cur: "JPY", wantErr: ErrTooPrecise},
		{in: "1.234", cur: "KWD", want: "KWD 1.234"},
		{in: "abc", cur: "KES", wantErr: ErrSyntax},
		{in: "", cur: "KES", wantErr: ErrSyntax},
		{in: "1e3", cur: "KES", wantErr: ErrSyntax},
		{in: "1,000", cur: "KES", wantErr: ErrSyntax},
		{in: " 10", cur: "KES", wantErr: ErrSyntax},
		{in: ".", cur: "KES", wantErr: ErrSyntax},
		{in: "10", cur: "XYZ", wantCode: true},
	}
	for _, tc := range cases {
		got, err := Parse(tc.in, tc.cur)
		switch {
		case tc.wantCode:
			var uc *UnknownCurrencyError
			if !errors.As(err, &uc) {
				t.Errorf("Parse(%q, %q) err = %v, want UnknownCurrencyError", tc.in, tc.cur, err)
			}
		case tc.wantErr != nil:
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("Parse(%q, %q) err = %v, want %v", tc.in, tc.cur, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("Parse(%q, %q): %v", tc.in, tc.cur, err)
		case got.String() != tc.want:
			t.Errorf("Parse(%q, %q) = %s, want %s", tc.in, tc.cur, got, tc.want)
		}
	}
}

func TestMinorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		minor int64
		cur   string
		text  string
	}{{12345, "USD", "123.45"}, {500, "JPY", "500"}, {1234, "KWD", "1.234"}, {-99, "KES", "-0.99"}} {
		a, err := FromMinor(tc.minor, tc.cur)
		if err != nil {
			t.Fatal(err)
		}
		if a.Text() != tc.text {
			t.Errorf("FromMinor(%d, %s) = %s, want %s", tc.minor, tc.cur, a.Text(), tc.text)
		}
		back, err := a.Minor()
		if err != nil || back != tc.minor {
			t.Errorf("Minor() = %d, %v; want %d", back, err, tc.minor)
		}
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"1131340": "1,131,340.00", "-4000": "-4,000.00", "12.5": "12.50", "999": "999.00"} {
		a, err := Parse(in, "KES")
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Format(); got != want {
			t.Errorf("Format(%s) = %s, want %s", in, got, want)
		}
	}
}
