package jsonbody_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/jsonbody"
)

// cases are bodies and what the rule says of them: the path of a repeated
// key, or the error (nil: accepted).
var cases = []struct {
	name, body string
	dup        string // the DuplicateKeyError's message
	err        error
}{
	{name: "object", body: `{"amount":"10.00","currency":"KES"}`},
	{name: "nested", body: `{"data":{"object":{"amount":1050,"currency":"usd"}}}`},
	{name: "same key in sibling objects", body: `{"a":{"id":1},"b":{"id":2},"c":[{"id":3},{"id":4}]}`},
	{name: "same key at two depths", body: `{"id":1,"x":{"id":2}}`},
	{name: "scalar", body: `"text"`},
	{name: "array", body: `[1,2,{"a":1}]`},
	{name: "big number", body: `{"n":1e400}`},
	{name: "surrounding space", body: " \n{\"a\":1}\r\n "},
	{name: "top-level repeat", body: `{"amount":"10.00","provider":"mpesa","amount":"99999.00"}`, dup: `amount: duplicate key`},
	{name: "repeat in another case", body: `{"amount":"10.00","Amount":"99999.00"}`, dup: `Amount: duplicate key (the same as amount, case ignored)`},
	{name: "repeat deep", body: `{"id":"evt_1","data":{"object":{"id":"ch_1","amount":1050,"currency":"usd","amount":1}}}`, dup: `data.object.amount: duplicate key`},
	{name: "repeat in an array element", body: `{"refunds":{"data":[{"id":"re_1"},{"id":"re_2","ID":"re_3"}]}}`, dup: `refunds.data[1].ID: duplicate key (the same as id, case ignored)`},
	{name: "repeat in a nested array", body: `[[1],[{"a":1,"a":2}]]`, dup: `[1][0].a: duplicate key`},
	{name: "repeat after a nested value", body: `{"a":{"b":[1,{"c":2}]},"d":3,"a":4}`, dup: `a: duplicate key`},
	{name: "repeat spelled with an escape", body: `{"amount":1,"\u0061mount":2}`, dup: `amount: duplicate key`},
	{name: "Kelvin sign folds to k", body: "{\"kind\":1,\"\u212aind\":2}", dup: "\u212aind: duplicate key (the same as kind, case ignored)"},
	{name: "long s folds to s", body: "{\"status\":1,\"\u017ftatus\":2}", dup: "\u017ftatus: duplicate key (the same as status, case ignored)"},
	{name: "escapes in a repeated key", body: `{"a\u001b[2J\u202e":1,"A\u001b[2J\u202e":2}`, dup: `A\x1b[2J\u202e: duplicate key (the same as a\x1b[2J\u202e, case ignored)`},
	{name: "the empty key twice", body: `{"":1,"":2}`, dup: `"": duplicate key`},
	{name: "the empty key twice deep", body: `{"a":[{"":1,"":2}]}`, dup: `a[0]."": duplicate key`},
	{name: "not UTF-8", body: "{\"a\":\"\xff\"}", err: jsonbody.ErrNotUTF8},
	{name: "trailing value", body: `{"a":1} {"a":2}`, err: jsonbody.ErrTrailingData},
	{name: "trailing garbage", body: `{"a":1} x`, err: jsonbody.ErrTrailingData},
	{name: "empty", body: "", err: jsonbody.ErrEmpty},
	{name: "blank", body: " \n", err: jsonbody.ErrEmpty},
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range cases {
		err := jsonbody.Check([]byte(tc.body))
		var dup *jsonbody.DuplicateKeyError
		switch {
		case tc.dup != "":
			if !errors.As(err, &dup) || err.Error() != tc.dup {
				t.Errorf("%s: Check = %v, want %s", tc.name, err, tc.dup)
			}
		case !errors.Is(err, tc.err):
			t.Errorf("%s: Check = %v, want %v", tc.name, err, tc.err)
		}
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	for _, tc := range cases {
		var v any
		err := jsonbody.Decode([]byte(tc.body), &v, jsonbody.Options{UseNumber: true})
		var dup *jsonbody.DuplicateKeyError
		switch {
		case tc.dup != "":
			if !errors.As(err, &dup) || err.Error() != tc.dup {
				t.Errorf("%s: Decode = %v, want %s", tc.name, err, tc.dup)
			}
		case !errors.Is(err, tc.err):
			t.Errorf("%s: Decode = %v, want %v", tc.name, err, tc.err)
		case err == nil && v == nil:
			t.Errorf("%s: decoded nothing", tc.name)
		}
	}
}

// intent is a target as the intents API decodes it.
type intent struct {
	Provider string            `json:"provider"`
	Amount   json.Number       `json:"amount"`
	Metadata map[string]string `json:"metadata"`
}

func TestDecodeOptions(t *testing.T) {
	t.Parallel()
	var in intent
	if err := jsonbody.Decode([]byte(`{"provider":"mpesa","amount":1500.00}`), &in, jsonbody.Options{UseNumber: true}); err != nil || in.Amount != "1500.00" {
		t.Errorf("a number is read by its digits: %+v, %v", in, err)
	}
	err := jsonbody.Decode([]byte(`{"provider":"mpesa","colour":"red"}`), &intent{}, jsonbody.Options{DisallowUnknownFields: true})
	if err == nil || !strings.Contains(err.Error(), `unknown field "colour"`) {
		t.Errorf("an unknown field: %v", err)
	}
	if err := jsonbody.Decode([]byte(`{"provider":"mpesa","colour":"red"}`), &intent{}, jsonbody.Options{}); err != nil {
		t.Errorf("unknown fields allowed: %v", err)
	}
	if err := jsonbody.Decode([]byte(`{"provider":`), &intent{}, jsonbody.Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v, want encoding/json's error", err)
	}
	var se *json.SyntaxError
	if err := jsonbody.Decode([]byte(`{"provider":"x",}`), &intent{}, jsonbody.Options{}); !errors.As(err, &se) {
		t.Errorf("not JSON: %v, want encoding/json's syntax error", err)
	}
	var te *json.UnmarshalTypeError
	if err := jsonbody.Decode([]byte(`{"provider":1}`), &intent{}, jsonbody.Options{}); !errors.As(err, &te) || te.Field != "provider" {
		t.Errorf("wrong type: %v, want encoding/json's type error", err)
	}
	kept := intent{Provider: "stripe"}
	if err := jsonbody.Decode([]byte("  "), &kept, jsonbody.Options{AllowEmpty: true}); err != nil || kept.Provider != "stripe" {
		t.Errorf("an allowed empty body: %+v, %v", kept, err)
	}
	// Metadata keys differing in case are one key to the rule too: the
	// rule is the same at every depth, whatever the target.
	err = jsonbody.Decode([]byte(`{"metadata":{"order":"1","Order":"2"}}`), &intent{}, jsonbody.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "metadata.Order: duplicate key") {
		t.Errorf("metadata keys in two cases: %v", err)
	}
}

// TestLastValueWouldWin shows what the rule prevents: encoding/json keeps
// the last of two keys, also when they differ in case.
func TestLastValueWouldWin(t *testing.T) {
	t.Parallel()
	body := []byte(`{"amount":"10.00","Amount":"99999.00"}`)
	var in intent
	if err := json.Unmarshal(body, &in); err != nil || in.Amount != "99999.00" {
		t.Fatalf("encoding/json: %+v, %v", in, err)
	}
	if err := jsonbody.Decode(body, &in, jsonbody.Options{}); err == nil {
		t.Fatal("the rule took a repeated key")
	}
}

func TestLongPathsAreCut(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("k", 1000)
	body := `{"` + key + `":1,"` + key + `":2}`
	err := jsonbody.Check([]byte(body))
	var dup *jsonbody.DuplicateKeyError
	if !errors.As(err, &dup) || len(dup.Path) > 100 {
		t.Fatalf("err %v", err)
	}
	deep := strings.Repeat(`{"a":`, 400) + `{"b":1,"b":2}` + strings.Repeat("}", 400)
	if err := jsonbody.Check([]byte(deep)); !errors.As(err, &dup) || len(dup.Path) > 520 || !strings.HasSuffix(dup.Path, "a.b") {
		t.Fatalf("deep: %v", err)
	}
}

// FuzzDecode: no input panics; an accepted body decodes as encoding/json
// decodes it, and none of its objects holds two keys that encoding/json
// would match to one field.
func FuzzDecode(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got any
		err := jsonbody.Decode(data, &got, jsonbody.Options{UseNumber: true})
		cerr := jsonbody.Check(data)
		if err != nil {
			var dup *jsonbody.DuplicateKeyError
			if errors.As(err, &dup) && !errors.As(cerr, &dup) {
				t.Fatalf("Decode found a repeated key (%v), Check did not (%v)", err, cerr)
			}
			if errors.As(err, &dup) && dup.Path == "" {
				t.Fatalf("a repeated key without a path: %v", err)
			}
			return
		}
		if cerr != nil {
			t.Fatalf("Decode accepted %q, Check refused it: %v", data, cerr)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", data, err)
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if !bytes.Equal(a, b) {
			t.Fatalf("decoded %s, encoding/json %s", a, b)
		}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				keys := make([]string, 0, len(v))
				for k, e := range v {
					for _, o := range keys {
						if strings.EqualFold(k, o) {
							t.Fatalf("accepted %q with keys %q and %q", data, k, o)
						}
					}
					keys = append(keys, k)
					walk(e)
				}
			case []any:
				for _, e := range v {
					walk(e)
				}
			}
		}
		walk(got)
		// Parse, render, parse again: the same value.
		var again any
		if err := jsonbody.Decode(a, &again, jsonbody.Options{UseNumber: true}); err != nil {
			t.Fatalf("the rendering %s of an accepted body is refused: %v", a, err)
		}
	})
}
