package books

import (
	"encoding/json"
	"slices"
	"strings"
)

// replacer replaces the forms of a subject, and any other text an erasure
// renames (the ids of findings whose evidence named the subject), in text,
// bytes and JSON, keeping JSON valid.
type replacer struct {
	rules []rule
}

type rule struct {
	// from is lower case; it is compared without regard to ASCII case.
	from, to string
	bounded  bool
}

func newReplacer(s Subject, token string) *replacer {
	r := &replacer{}
	for _, f := range s.Forms {
		r.rules = append(r.rules, rule{from: strings.ToLower(f.Text), to: token, bounded: f.Bounded})
	}
	return r
}

// rename adds a replacement of one text by another.
func (r *replacer) rename(from, to string) {
	r.rules = append(r.rules, rule{from: strings.ToLower(from), to: to})
	slices.SortStableFunc(r.rules, func(a, b rule) int { return len(b.from) - len(a.from) })
}

// needles are the texts searched for.
func (r *replacer) needles() []string {
	out := make([]string, len(r.rules))
	for i, x := range r.rules {
		out[i] = x.from
	}
	return out
}

// emailChar reports whether c can be part of an e-mail address, so that a
// bounded form next to it is part of a longer one.
func emailChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._%+-", c) >= 0
}

// at returns the rule that matches s at i, if any.
func (r *replacer) at(s string, i int) (rule, bool) {
	for _, x := range r.rules {
		n := len(x.from)
		if i+n > len(s) || !equalFoldASCII(s[i:i+n], x.from) {
			continue
		}
		if x.bounded {
			if i > 0 && emailChar(s[i-1]) {
				continue
			}
			if j := i + n; j < len(s) && (emailChar(s[j]) && s[j] != '.' ||
				s[j] == '.' && j+1 < len(s) && emailChar(s[j+1]) && s[j+1] != '.') {
				continue
			}
		}
		return x, true
	}
	return rule{}, false
}

func equalFoldASCII(a, lower string) bool {
	for i := 0; i < len(a); i++ {
		c := a[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// text replaces every match in s.
func (r *replacer) text(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		x, ok := r.at(s, i)
		if !ok {
			i++
			continue
		}
		if b.Len() == 0 && last == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:i])
		b.WriteString(x.to)
		i += len(x.from)
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// contains reports whether s holds a match.
func (r *replacer) contains(s string) bool {
	for i := range len(s) {
		if _, ok := r.at(s, i); ok {
			return true
		}
	}
	return false
}

// value replaces in s, which is JSON when isJSON is set (and s parses) or
// when it is a JSON object or array: then strings are replaced inside, and
// a number that held a match becomes a string, so that the result is JSON
// still. Other text (a phone number alone is a JSON number too) is
// replaced as text.
func (r *replacer) value(s string, isJSON bool) string {
	if !r.contains(s) {
		return s
	}
	if isJSON && json.Valid([]byte(s)) || jsonContainer(s) {
		if out, ok := r.json(s); ok {
			return out
		}
	}
	return r.text(s)
}

// jsonContainer reports whether s is a JSON object or array.
func jsonContainer(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(s))
}

// json replaces in JSON text s token by token; ok is false when s is not
// JSON after all.
func (r *replacer) json(s string) (string, bool) {
	var b strings.Builder
	b.Grow(len(s) + 32)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return "", false
			}
			b.WriteByte('"')
			b.WriteString(r.text(s[i+1 : j]))
			b.WriteByte('"')
			i = j + 1
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
				j++
			}
			num := s[i:j]
			if out := r.text(num); out != num {
				b.WriteString(`"` + out + `"`)
			} else {
				b.WriteString(num)
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), true
}
