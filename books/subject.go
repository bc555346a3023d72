package books

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Subject is the person an erasure is about, named by a phone number
// (MSISDN) or an e-mail address, with every form in which the books may
// hold it.
type Subject struct {
	// Kind is "msisdn" or "email".
	Kind string
	// Canonical is the form the token is computed from: the MSISDN's
	// digits with the country code (254712345678), the e-mail address in
	// lower case.
	Canonical string
	// Forms are what is searched for and replaced, compared without
	// regard to ASCII case, longest first.
	Forms []Form
}

// Form is one way the books may write a subject.
type Form struct {
	Text string
	// Bounded forms (e-mail addresses) are replaced only where they stand
	// alone: not inside a longer address. Phone numbers are replaced
	// wherever their digits appear, as in a CheckoutRequestID that ends in
	// the payer's number.
	Bounded bool
}

// SubjectError reports a subject that is neither a phone number nor an
// e-mail address.
type SubjectError struct {
	Input string
	Err   error
}

// Error names the input and what is wrong with it.
func (e *SubjectError) Error() string {
	return fmt.Sprintf("books: customer %q: %v", e.Input, e.Err)
}

// Unwrap returns the cause.
func (e *SubjectError) Unwrap() error { return e.Err }

// kenya is the country code a local number (07..., 01...) is read in.
const kenya = "254"

// ParseSubject reads a phone number (0712345678, 712345678, 254712345678,
// +254 712 345 678; a local number is Kenyan, another country's needs its
// + and code) or an e-mail address.
func ParseSubject(s string) (Subject, error) {
	in := strings.TrimSpace(s)
	if strings.Contains(in, "@") {
		return parseEmail(in)
	}
	return parseMSISDN(in)
}

func parseEmail(in string) (Subject, error) {
	e := strings.ToLower(in)
	local, domain, _ := strings.Cut(e, "@")
	switch {
	case local == "" || domain == "":
		return Subject{}, &SubjectError{in, errors.New("an e-mail address needs a name and a domain")}
	case strings.ContainsAny(e, " \t\r\n\"'<>(),;:\\[]") || strings.Count(e, "@") != 1:
		return Subject{}, &SubjectError{in, errors.New("not an e-mail address")}
	case !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") ||
		strings.Contains(domain, ".."):
		return Subject{}, &SubjectError{in, errors.New("the domain needs a dot between names")}
	case len(e) > 254:
		return Subject{}, &SubjectError{in, errors.New("longer than 254 characters")}
	}
	for _, r := range e {
		if r < 0x21 || r > 0x7e {
			return Subject{}, &SubjectError{in, errors.New("only printable ASCII is searched for")}
		}
	}
	sub := Subject{Kind: "email", Canonical: e}
	sub.add(e, true)
	sub.add(strings.Replace(e, "@", "%40", 1), true)
	sub.add(sha256Hex(e), false)
	sub.sort()
	return sub, nil
}

func parseMSISDN(in string) (Subject, error) {
	plus := strings.HasPrefix(in, "+")
	var digits strings.Builder
	for i, r := range in {
		switch {
		case r >= '0' && r <= '9':
			digits.WriteRune(r)
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')' || (r == '+' && i == 0):
		default:
			return Subject{}, &SubjectError{in, fmt.Errorf("%q is no part of a phone number, and without an @ it is no e-mail address", r)}
		}
	}
	d := digits.String()
	var full string
	switch {
	case plus:
		full = d
	case len(d) == 10 && d[0] == '0':
		full = kenya + d[1:]
	case len(d) == 9 && (d[0] == '7' || d[0] == '1'):
		full = kenya + d
	default:
		full = d
	}
	if len(full) < 10 || len(full) > 15 || full[0] == '0' {
		return Subject{}, &SubjectError{in, errors.New("want a phone number of 10 to 15 digits with its country code, " +
			"or a Kenyan number as 07..., 01... or 7...")}
	}
	sub := Subject{Kind: "msisdn", Canonical: full}
	plain := []string{full, "+" + full}
	if national, ok := strings.CutPrefix(full, kenya); ok && len(national) == 9 {
		local := "0" + national
		plain = append(plain, local)
		for _, sep := range []string{" ", "-"} {
			g := national[:3] + sep + national[3:6] + sep + national[6:]
			sub.add(kenya+sep+g, false)
			sub.add("+"+kenya+sep+g, false)
			sub.add("0"+g, false)
		}
	}
	for _, p := range plain {
		sub.add(p, false)
		sub.add(sha256Hex(p), false)
	}
	sub.sort()
	return sub, nil
}

func (s *Subject) add(text string, bounded bool) {
	for _, f := range s.Forms {
		if strings.EqualFold(f.Text, text) {
			return
		}
	}
	s.Forms = append(s.Forms, Form{Text: text, Bounded: bounded})
}

// sort puts longer forms first, so that +254... is replaced before the
// 254... inside it.
func (s *Subject) sort() {
	f := s.Forms
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && (len(f[j].Text) > len(f[j-1].Text) ||
			len(f[j].Text) == len(f[j-1].Text) && f[j].Text < f[j-1].Text); j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TokenPrefix starts every token that replaced an erased identifier.
const TokenPrefix = "erased:"

// Token is the one-way stand-in of the subject under key: the first 16 hex
// digits of HMAC-SHA256(key, kind ":" canonical), after TokenPrefix. The
// same person gets the same token under the same key, so what named them
// still links up; without the key the token says nothing of them.
func (s Subject) Token(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s.Kind + ":" + s.Canonical))
	return TokenPrefix + hex.EncodeToString(m.Sum(nil))[:16]
}

// Needles are the texts of the forms.
func (s Subject) Needles() []string {
	out := make([]string, len(s.Forms))
	for i, f := range s.Forms {
		out[i] = f.Text
	}
	return out
}
