package books

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

// subjectCases are phone numbers and e-mail addresses as people type them,
// with the canonical form each stands for, or "" for a refusal.
var subjectCases = []struct{ in, kind, canonical string }{
	{"0712345678", "msisdn", "254712345678"},
	{"712345678", "msisdn", "254712345678"},
	{"254712345678", "msisdn", "254712345678"},
	{"+254712345678", "msisdn", "254712345678"},
	{" +254 712-345-678 ", "msisdn", "254712345678"},
	{"(0712) 345.678", "msisdn", "254712345678"},
	{"0112345678", "msisdn", "254112345678"},
	{"+447911123456", "msisdn", "447911123456"},
	{"Bob.Smith+shop@Example.COM", "email", "bob.smith+shop@example.com"},
	{"", "", ""},
	{"order 17", "", ""},
	{"12345", "", ""},
	{"0712", "", ""},
	{"+0712345678", "", ""},
	{"1234567890123456", "", ""},
	{"07123x5678", "", ""},
	{"bob@", "", ""},
	{"@example.com", "", ""},
	{"bob@localhost", "", ""},
	{"bob@example..com", "", ""},
	{"bo b@example.com", "", ""},
	{"bob@@example.com", "", ""},
	{"bøb@example.com", "", ""},
}

func TestParseSubject(t *testing.T) {
	t.Parallel()
	for _, tc := range subjectCases {
		s, err := ParseSubject(tc.in)
		if tc.canonical == "" {
			var se *SubjectError
			if err == nil || !errors.As(err, &se) {
				t.Errorf("ParseSubject(%q) = %+v, %v; want a *SubjectError", tc.in, s, err)
			}
			continue
		}
		if err != nil || s.Kind != tc.kind || s.Canonical != tc.canonical {
			t.Errorf("ParseSubject(%q) = %s %q, %v; want %s %q", tc.in, s.Kind, s.Canonical, err, tc.kind, tc.canonical)
		}
	}
	s, _ := ParseSubject("0712345678")
	for _, want := range []string{"254712345678", "+254712345678", "0712345678", "254 712 345 678", "+254 712 345 678",
		"0712 345 678", "254-712-345-678", "0712-345-678",
		sha256Hex("254712345678"), sha256Hex("0712345678"), sha256Hex("+254712345678")} {
		if !slices.Contains(s.Needles(), want) {
			t.Errorf("the forms of 0712345678 lack %q: %q", want, s.Needles())
		}
	}
	for i := 1; i < len(s.Forms); i++ {
		if len(s.Forms[i].Text) > len(s.Forms[i-1].Text) {
			t.Errorf("forms not longest first: %q", s.Needles())
		}
	}
	a, _ := ParseSubject("+254 712 345 678")
	if s.Token(testKey) != a.Token(testKey) || s.Token(testKey) == s.Token([]byte("another key of 16 bytes")) {
		t.Errorf("tokens: %s %s", s.Token(testKey), a.Token(testKey))
	}
	e, _ := ParseSubject("BOB@example.com")
	if e.Token(testKey) == s.Token(testKey) || !strings.HasPrefix(e.Token(testKey), TokenPrefix) || len(e.Token(testKey)) != 23 {
		t.Errorf("e-mail token %q", e.Token(testKey))
	}
}

// replaceCases are values as the books hold them, before and after
// erasing 0712345678 or bob@example.com (T stands for the token).
var replaceCases = []struct {
	who, in, want string
	json          bool
}{
	{"0712345678", `{"Name":"PhoneNumber","Value":254712345678}`, `{"Name":"PhoneNumber","Value":"T"}`, false},
	{"0712345678", `{"CheckoutRequestID":"ws_CO_02112026150405123254712345678"}`, `{"CheckoutRequestID":"ws_CO_02112026150405123T"}`, false},
	{"0712345678", `ws_CO_02112026150405123254712345678`, `ws_CO_02112026150405123T`, false},
	{"0712345678", "SB1,Pay Bill from 254712345678 - PETER K Acc. INV-1,Completed", "SB1,Pay Bill from T - PETER K Acc. INV-1,Completed", false},
	{"0712345678", "2547****5678 - PETER K", "2547****5678 - PETER K", false},
	{"0712345678", "call +254712345678 or 0712 345 678", "call T or T", false},
	{"0712345678", "254712345678", "T", false},
	{"0712345678", "254712345678", `"T"`, true},
	{"0712345678", `[254712345678, "0712345678", {"x": -254712345678.5e1}]`, `["T", "T", {"x": "-T.5e1"}]`, true},
	{"0712345678", `{"MSISDN":"` + strings.ToUpper(sha256Hex("254712345678")) + `"}`, `{"MSISDN":"T"}`, false},
	{"0712345678", `msisdn=%2B254712345678&x=1`, `msisdn=%2BT&x=1`, false},
	{"0712345678", `{"a":"\"254712345678\""}`, `{"a":"\"T\""}`, false},
	{"0712345678", `{"broken": 254712345678`, `{"broken": T`, false},
	{"bob@example.com", "Receipt to bob@example.com.", "Receipt to T.", false},
	{"bob@example.com", "<BOB@Example.com>", "<T>", false},
	{"bob@example.com", "jimbob@example.com", "jimbob@example.com", false},
	{"bob@example.com", "jim.bob@example.com", "jim.bob@example.com", false},
	{"bob@example.com", "bob@example.com.au", "bob@example.com.au", false},
	{"bob@example.com", "bob@example.community", "bob@example.community", false},
	{"bob@example.com", "mailto:bob%40example.com", "mailto:T", false},
	{"bob@example.com", `{"email":"bob@example.com","name":"Bob"}`, `{"email":"T","name":"Bob"}`, false},
}

func TestReplace(t *testing.T) {
	t.Parallel()
	for _, tc := range replaceCases {
		s, err := ParseSubject(tc.who)
		if err != nil {
			t.Fatal(err)
		}
		r := newReplacer(s, "T")
		if got := r.value(tc.in, tc.json); got != tc.want {
			t.Errorf("erase %s from %s:\n got %s\nwant %s", tc.who, tc.in, got, tc.want)
		}
		if json.Valid([]byte(tc.in)) && (tc.json || jsonContainer(tc.in)) && !json.Valid([]byte(r.value(tc.in, tc.json))) {
			t.Errorf("erase %s from %s: no longer JSON", tc.who, tc.in)
		}
	}
	// A finding renamed: its id is replaced wherever it is named.
	s, _ := ParseSubject("bob@example.com")
	r := newReplacer(s, "T")
	r.rename("f_0123456789abcdef0123", "f_aaaaaaaaaaaaaaaaaaaa")
	if got := r.value(`{"finding_id":"f_0123456789abcdef0123"}`, true); got != `{"finding_id":"f_aaaaaaaaaaaaaaaaaaaa"}` {
		t.Errorf("rename: %s", got)
	}
}

func FuzzParseSubject(f *testing.F) {
	for _, tc := range subjectCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSubject(in)
		if err != nil {
			return
		}
		again, err := ParseSubject(s.Canonical)
		if err != nil || again.Canonical != s.Canonical || again.Kind != s.Kind {
			t.Fatalf("%q parsed as %q, which parses as %q, %v", in, s.Canonical, again.Canonical, err)
		}
		if len(s.Forms) == 0 || !slices.Contains(s.Needles(), s.Canonical) {
			t.Fatalf("%q: forms %q lack the canonical %q", in, s.Needles(), s.Canonical)
		}
		for _, n := range s.Needles() {
			if n == "" || !utf8.ValidString(n) {
				t.Fatalf("%q: form %q", in, n)
			}
		}
		if s.Kind == "msisdn" && (len(s.Canonical) < 10 || strings.Trim(s.Canonical, "0123456789") != "") {
			t.Fatalf("%q: MSISDN %q", in, s.Canonical)
		}
		if tok := s.Token(testKey); tok != again.Token(testKey) || len(tok) != len(TokenPrefix)+16 {
			t.Fatalf("%q: token %q", in, tok)
		}
	})
}

// FuzzReplace: whatever the text and the person, nothing of them is left
// after replacing, JSON stays JSON, and text that does not name them is
// returned as it was.
func FuzzReplace(f *testing.F) {
	for _, tc := range replaceCases {
		f.Add(tc.who, tc.in, tc.json)
	}
	f.Fuzz(func(t *testing.T, who, in string, isJSON bool) {
		s, err := ParseSubject(who)
		if err != nil {
			return
		}
		r := newReplacer(s, s.Token(testKey))
		out := r.value(in, isJSON)
		if !r.contains(in) {
			if out != in {
				t.Fatalf("%q names nobody, became %q", in, out)
			}
			return
		}
		if r.contains(out) {
			t.Fatalf("erasing %q from %q left %q", who, in, out)
		}
		if json.Valid([]byte(in)) && (isJSON || jsonContainer(in)) && !json.Valid([]byte(out)) {
			t.Fatalf("erasing %q from JSON %q gave %q", who, in, out)
		}
	})
}
