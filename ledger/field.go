package ledger

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

var errEmpty = errors.New("is empty")

// FieldError reports a problem with one field of a domain value.
type FieldError struct {
	Field string
	Err   error
}

// maxErrText bounds the text of one field's or line's error, so that a
// huge or hostile value is never echoed whole (on stderr, in the quarantine).
const maxErrText = 1024

func (e *FieldError) Error() string {
	return SafeText(fmt.Sprintf("field %s: %v", SafeText(e.Field, maxClip), e.Err), maxErrText)
}
func (e *FieldError) Unwrap() error { return e.Err }

// MaskCustomer hides most of a phone number or e-mail address so it can be
// logged or shown: 254712340845 -> 2547****0845, jane@example.com -> j***@example.com.
// Values that are already masked or hashed are shortened, never revealed.
func MaskCustomer(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasPrefix(s, "sha256:") {
		return s
	}
	if at := strings.IndexByte(s, '@'); at > 0 {
		_, first := utf8.DecodeRuneInString(s)
		return s[:first] + "***" + s[at:]
	}
	if len(s) == 64 && strings.Trim(strings.ToLower(s), "0123456789abcdef") == "" {
		return "sha256:" + s[:8] + "…"
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == '*' {
			return r
		}
		return -1
	}, s)
	if len(digits) >= 8 {
		return digits[:4] + "****" + digits[len(digits)-4:]
	}
	r := []rune(s)
	if len(r) <= 4 {
		return "****"
	}
	return string(r[:2]) + "****"
}

// MaskMSISDNs masks every Kenyan phone number inside s, wherever it sits:
// a whole number (254712340845, 0712340845) or the tail of a longer run of
// digits, as in an M-Pesa CheckoutRequestID that ends in the payer's
// number (ws_CO_26052024101530254712340845). The number keeps its first
// four and last four digits (2547****0845), as MaskCustomer shows it; a
// local number its first and last three (071****845). It is
// the one masking function of the logs: the binary's log handler applies it
// to every message and attribute.
func MaskMSISDNs(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		run := s[i:j]
		from, to := -1, -1
		switch {
		case len(run) >= 12 && run[len(run)-12:len(run)-9] == "254" && (run[len(run)-9] == '7' || run[len(run)-9] == '1'):
			from, to = j-8, j-4 // 2547XXXXXXXX, alone or at the end of a longer id
		case len(run) == 10 && run[0] == '0' && (run[1] == '7' || run[1] == '1'):
			from, to = i+3, j-3 // 07XXXXXXXX
		}
		if from >= 0 {
			if b == nil {
				b = []byte(s)
			}
			for k := from; k < to; k++ {
				b[k] = '*'
			}
		}
		i = j
	}
	if b == nil {
		return s
	}
	return string(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ParseError reports bad outside input: the file (or source) and line, the
// field at fault and why. Every parser returns it so that errors name where
// to look, and the importers quarantine what it names.
type ParseError struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(SafeText(e.File, maxErrText))
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.Field != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		fmt.Fprintf(&b, "field %s", SafeText(e.Field, maxClip))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(SafeText(e.Err.Error(), maxErrText))
	return strings.TrimSpace(b.String())
}

func (e *ParseError) Unwrap() error { return e.Err }

// RejectedFileError reports a file that was refused as a whole: nothing of it
// was imported, and every problem (each naming its line and field) was put in
// the quarantine with the rejected line.
type RejectedFileError struct {
	File     string
	Problems []*ParseError
}

// maxListedProblems bounds how many problems an error message lists.
const maxListedProblems = 20

func (e *RejectedFileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: rejected, nothing imported (%d problem(s), kept in quarantine)", e.File, len(e.Problems))
	for i, p := range e.Problems {
		if i == maxListedProblems {
			fmt.Fprintf(&b, "\n  ... and %d more (reconcile keeps them all in the quarantine table)", len(e.Problems)-i)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap returns the problems, so errors.As finds a *ParseError.
func (e *RejectedFileError) Unwrap() []error {
	out := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p
	}
	return out
}

// SameCustomer reports whether two ways of naming a customer name the same
// person: the same e-mail address, or the same phone number once masked as
// MaskCustomer masks it, whatever else they say ("2547****0342 - CHEBET" is
// 254712340342) and whether written in the international or the Kenyan
// local form (0712340342). Names alone, too short to mask, never match.
func SameCustomer(a, b string) bool {
	ka, kb := customerKey(a), customerKey(b)
	return ka != "" && ka == kb
}

// customerKey is the masked phone number or e-mail of s, "" when s holds
// neither.
func customerKey(s string) string {
	s = strings.TrimSpace(s)
	if name, _, ok := strings.Cut(s, " - "); ok {
		s = name // the counterparty form "phone - NAME"
	}
	if at := strings.IndexByte(s, '@'); at > 0 {
		return strings.ToLower(MaskCustomer(s))
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r == '*' {
			return r
		}
		return -1
	}, s)
	if len(digits) == 10 && digits[0] == '0' && digits[1] != '*' {
		digits = "254" + digits[1:] // a Kenyan number in its local form
	}
	if len(digits) < 9 {
		return ""
	}
	return MaskCustomer(digits)
}
