package mpesa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// flex is an M-Pesa scalar that may arrive as a JSON number, a JSON string or
// null. It keeps the raw text: a number's digits exactly as sent (never
// parsed into a binary number), a string's contents unquoted.
type flex struct {
	Text string
	// Set is false for an absent value or null.
	Set bool
	// Number is true when the value was a JSON number.
	Number bool
}

var errWrongType = errors.New("is neither a number nor a string")

func (f *flex) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*f = flex{}
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flex{Text: s, Set: true}
		return nil
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		*f = flex{Text: string(b), Set: true, Number: true}
		return nil
	}
	kind := "a boolean"
	switch b[0] {
	case '{':
		kind = "an object"
	case '[':
		kind = "an array"
	}
	return fmt.Errorf("%w: got %s", errWrongType, kind)
}

// flexOf decodes a raw JSON value as a flex; an absent value is unset.
func flexOf(raw json.RawMessage) (flex, error) {
	var f flex
	if len(raw) == 0 {
		return f, nil
	}
	err := f.UnmarshalJSON(raw)
	return f, err
}

// String returns the trimmed text.
func (f flex) String() string { return strings.TrimSpace(f.Text) }

// item is one entry of a key/value list: {Name, Value} in STK callbacks,
// {Key, Value} in result callbacks. Value stays raw until a caller asks for it,
// so an unexpected type in an item nobody reads is harmless.
type item struct {
	Name  flex            `json:"Name"`
	Key   flex            `json:"Key"`
	Value json.RawMessage `json:"Value"`
	// norm is name() normalised by normKey, filled when a list is decoded.
	norm string
}

func (it item) name() string {
	if it.Key.Set {
		return it.Key.String()
	}
	return it.Name.String()
}

// items is a key/value list, looked up by name: never by position, spaces
// and case ignored ("Conversation ID" = "ConversationID"). It decodes from an
// array of items or from a single item object.
type items []item

func (is *items) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*is = nil
		return nil
	case b[0] == '{':
		var one item
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*is = items{one}
	default:
		var list []item
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		*is = list
	}
	for i := range *is {
		(*is)[i].norm = normKey((*is)[i].name())
	}
	return nil
}

func normKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '_' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// get returns the value of the item named name. found is false when no
// item has the name; an item without Value is found and unset. Two items of
// the name with different values are an error, never one silently chosen.
func (is items) get(name string) (f flex, found bool, err error) {
	want := normKey(name)
	for _, it := range is {
		if it.norm != want {
			continue
		}
		if !found {
			f, err = flexOf(it.Value)
			if err != nil {
				return f, true, err
			}
			found = true
			continue
		}
		if g, gerr := flexOf(it.Value); gerr != nil || g.String() != f.String() {
			return flex{}, true, errors.New("appears twice with different values")
		}
	}
	return f, found, nil
}

// all returns the values of every item named name, in order.
func (is items) all(name string) []flex {
	want := normKey(name)
	var out []flex
	for _, it := range is {
		if it.norm == want {
			if f, err := flexOf(it.Value); err == nil && f.Set {
				out = append(out, f)
			}
		}
	}
	return out
}

// kvList is a {"ResultParameter": [...]} style wrapper whose list may be one
// object or an array, and whose inner name varies (ResultParameter,
// ResultParameters, ReferenceItem, Item).
type kvList struct {
	Items items
}

func (l *kvList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		l.Items = nil
		return nil
	}
	if b[0] == '[' {
		return json.Unmarshal(b, &l.Items)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for _, name := range []string{"ResultParameter", "ResultParameters", "ReferenceItem", "Item", "Items"} {
		if v, ok := lookup(m, name); ok {
			return json.Unmarshal(v, &l.Items)
		}
	}
	// A bare item ({"Key":..,"Value":..}) is a list of one.
	if _, ok := m["Key"]; ok {
		return json.Unmarshal(b, &l.Items)
	}
	if _, ok := m["Name"]; ok {
		return json.Unmarshal(b, &l.Items)
	}
	return nil
}

// lookup finds name in m: the exact key first, then the first key (in sorted
// order) equal to it ignoring case.
func lookup(m map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		if strings.EqualFold(k, name) {
			return m[k], true
		}
	}
	return nil, false
}
