package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Options choose how a body is decoded, besides the rule that always holds.
type Options struct {
	// UseNumber decodes numbers into json.Number where the target leaves
	// the type open (any), never into float64.
	UseNumber bool
	// DisallowUnknownFields refuses an object key that no field of the
	// target struct takes.
	DisallowUnknownFields bool
	// AllowEmpty accepts an empty or blank body as nothing to decode: v is
	// left as it is.
	AllowEmpty bool
}

// Errors of the rule. A repeated key is a *DuplicateKeyError.
var (
	// ErrNotUTF8 reports a body that is not valid UTF-8.
	ErrNotUTF8 = errors.New("is not valid UTF-8")
	// ErrTrailingData reports a body holding more than one JSON value.
	ErrTrailingData = errors.New("holds more than one JSON value (trailing data)")
	// ErrEmpty reports an empty or blank body where one is required.
	ErrEmpty = errors.New("is empty")
)

// DuplicateKeyError reports an object that names one key twice.
type DuplicateKeyError struct {
	// Path locates the repeated key: the keys from the top, joined by
	// dots, with [i] for the i-th element of an array
	// (data.object.refunds.data[0].amount), the empty key as "". The
	// last key is spelled as it was written the second time. It is never
	// empty.
	Path string
	// First is the key as it was written the first time, when it differs
	// (in case only) from the last element of Path.
	First string
}

func (e *DuplicateKeyError) Error() string { return e.Path + ": " + e.Reason() }

// Reason is the message without the path, for errors that name the path
// as their field: "duplicate key", with the first spelling when it differs.
func (e *DuplicateKeyError) Reason() string {
	if e.First != "" {
		return "duplicate key (the same as " + e.First + ", case ignored)"
	}
	return "duplicate key"
}

// Decode decodes data into v under the rule: valid UTF-8, no key named
// twice in one object, exactly one JSON value. It returns ErrNotUTF8,
// ErrEmpty, a *DuplicateKeyError, ErrTrailingData, or encoding/json's own
// error (*json.SyntaxError, *json.UnmarshalTypeError...) as it is.
func Decode(data []byte, v any, opt Options) error {
	if !utf8.Valid(data) {
		return ErrNotUTF8
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if opt.AllowEmpty {
			return nil
		}
		return ErrEmpty
	}
	if err := checkKeys(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if opt.UseNumber {
		dec.UseNumber()
	}
	if opt.DisallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ErrTrailingData
	}
	return nil
}

// Check applies the rule to data without decoding it: ErrNotUTF8, ErrEmpty,
// a *DuplicateKeyError, or ErrTrailingData. Whether data is otherwise valid
// JSON is left to the decoder that reads it: a syntax error ends the check
// without an error.
func Check(data []byte) error {
	if !utf8.Valid(data) {
		return ErrNotUTF8
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return ErrEmpty
	}
	if err := checkKeys(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var skip json.RawMessage
	if err := dec.Decode(&skip); err != nil {
		return nil
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ErrTrailingData
	}
	return nil
}

// frame is an object or array being read.
type frame struct {
	obj bool
	// key is the key whose value is being read (objects), index the
	// element (arrays, -1 before the first).
	key   string
	index int
	// wantKey is set when the next token of an object is a key.
	wantKey bool
	// keys holds the folded keys seen so far, with their first spelling.
	keys map[string]string
}

// checkKeys walks the tokens of the first JSON value in data and returns a
// *DuplicateKeyError for the first key named twice in one object. It stops
// quietly at a syntax error, which the decoder reports.
func checkKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number too large for float64 is no error here
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		n := len(stack)
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:n-1]
			if len(stack) == 0 {
				return nil
			}
			continue
		}
		if n > 0 {
			top := &stack[n-1]
			switch {
			case top.obj && top.wantKey:
				name, _ := tok.(string)
				folded := fold(name)
				if first, dup := top.keys[folded]; dup {
					top.key = name
					e := &DuplicateKeyError{Path: path(stack)}
					if first != name {
						e.First = clip(first)
					}
					return e
				}
				top.keys[folded] = name
				top.key, top.wantKey = name, false
				continue
			case top.obj:
				top.wantKey = true
			default:
				top.index++
			}
		}
		if d, ok := tok.(json.Delim); ok {
			f := frame{obj: d == '{', index: -1, wantKey: true}
			if f.obj {
				f.keys = map[string]string{}
			}
			stack = append(stack, f)
			continue
		}
		if len(stack) == 0 {
			return nil // a scalar at the top
		}
	}
}

// fold returns the form of a key under which encoding/json matches it to a
// struct field: ASCII letters upper-cased, other runes folded to one case
// by Unicode's simple folding, so keys fold equal exactly when
// bytes.EqualFold says so ("K" and the Kelvin sign, "s" and "ſ").
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(unicode.ToUpper(unicode.ToLower(r)))
		i += n
	}
	return b.String()
}

// maxKey bounds how much of one key a path shows, and maxPath the path.
const (
	maxKey  = 64
	maxPath = 512
)

// path renders the location of the key being read at the top of stack.
func path(stack []frame) string {
	var b strings.Builder
	for _, f := range stack {
		if f.obj {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(clip(f.key))
			continue
		}
		b.WriteString("[" + strconv.Itoa(f.index) + "]")
	}
	p := b.String()
	if len(p) > maxPath {
		// Keep the end, which names the key.
		cut := len(p) - maxPath
		for cut < len(p) && !utf8.RuneStart(p[cut]) {
			cut++
		}
		p = "..." + p[cut:]
	}
	return p
}

// clip cuts a key to maxKey bytes on a rune boundary, and escapes the
// characters that must not reach a terminal or a log as they are: control
// characters (\x1b) and bidirectional formatting (\u202e). The empty key
// is shown as "", so that a path is never empty.
func clip(s string) string {
	if s == "" {
		return `""`
	}
	if len(s) > maxKey {
		cut := maxKey
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x100 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == utf8.RuneError
}
