package csvfile

import (
	"github.com/reconcilehq/reconcile/internal/golden"

	"errors"
	"os"
	"strings"
	"testing"
)

func TestParserGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		m    Mapping
	}{{"bank.csv", bankMapping}, {"provider.csv", providerMapping}, {"semicolon.csv", semicolonMapping}} {
		data, err := os.ReadFile("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parse(t, tc.m, data, tc.file)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(got.rejects) > 0 {
			t.Fatalf("%s: rejected %v", tc.file, got.rejects)
		}
		for _, s := range got.sightings {
			checkSighting(t, s)
		}
		golden.Assert(t, "testdata/"+strings.TrimSuffix(tc.file, ".csv")+".golden", renderSightings(got.sightings))
	}
}

func TestMappingValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		mod   func(*Mapping)
		field string
	}{
		{"no provider", func(m *Mapping) { m.Provider = " " }, "provider"},
		{"two-character delimiter", func(m *Mapping) { m.Delimiter = ";;" }, "delimiter"},
		{"quote as delimiter", func(m *Mapping) { m.Delimiter = `"` }, "delimiter"},
		{"no id column", func(m *Mapping) { m.ID = "" }, "id"},
		{"no time column", func(m *Mapping) { m.Time = "" }, "time"},
		{"no time format", func(m *Mapping) { m.TimeFormat = "" }, "time_format"},
		{"strftime instead of a Go layout", func(m *Mapping) { m.TimeFormat = "%d/%m/%Y %H:%M" }, "time_format"},
		{"layout without a day", func(m *Mapping) { m.TimeFormat = "2006-01" }, "time_format"},
		{"zone abbreviation in the layout", func(m *Mapping) { m.TimeFormat = "02/01/2006 15:04 MST" }, "time_format"},
		{"no zone for a zoneless layout", func(m *Mapping) { m.Zone = "" }, "zone"},
		{"unknown zone", func(m *Mapping) { m.Zone = "Africa/Narobi" }, "zone"},
		{"Local zone", func(m *Mapping) { m.Zone = "Local" }, "zone"},
		{"amount and debit", func(m *Mapping) { m.Amount = "Amount" }, "amount"},
		{"debit without credit", func(m *Mapping) { m.Credit = "" }, "credit"},
		{"no amount at all", func(m *Mapping) { m.Debit, m.Credit = "", "" }, "amount"},
		{"odd thousands separator", func(m *Mapping) { m.ThousandsSeparator = "_" }, "thousands_separator"},
		{"same separators", func(m *Mapping) { m.ThousandsSeparator = "." }, "thousands_separator"},
		{"both currencies", func(m *Mapping) { m.Currency = "Currency" }, "currency"},
		{"no currency", func(m *Mapping) { m.FixedCurrency = "" }, "currency"},
		{"unknown fixed currency", func(m *Mapping) { m.FixedCurrency = "KSH" }, "fixed_currency"},
		{"status map without column", func(m *Mapping) { m.Status = "" }, "status_map"},
		{"status column without map", func(m *Mapping) { m.StatusMap = nil }, "status_map"},
		{"status mapped to nonsense", func(m *Mapping) { m.StatusMap = map[string]string{"Posted": "ok"} }, "status_map"},
		{"status keys that collide", func(m *Mapping) { m.StatusMap = map[string]string{"Posted": "succeeded", "POSTED": "failed"} }, "status_map"},
		{"type map without column", func(m *Mapping) { m.TypeMap = map[string]string{"x": "charge"} }, "type_map"},
		{"type column without map", func(m *Mapping) { m.Type = "Type"; m.OutType = "" }, "type_map"},
		{"out type is a charge", func(m *Mapping) { m.OutType = "charge" }, "out_type"},
		{"out type unknown", func(m *Mapping) { m.OutType = "withdrawal" }, "out_type"},
	}
	for _, tc := range cases {
		m := bankMapping
		tc.mod(&m)
		err := m.Validate()
		var me *MappingError
		if !errors.As(err, &me) || me.Field != tc.field {
			t.Errorf("%s: err = %v, want a mapping error on %s", tc.name, err, tc.field)
			continue
		}
		if !strings.HasPrefix(err.Error(), "mapping."+tc.field+": ") {
			t.Errorf("%s: message %q does not start with mapping.%s", tc.name, err, tc.field)
		}
		if _, err := NewParser(m, nil); err == nil {
			t.Errorf("%s: NewParser accepted the mapping", tc.name)
		}
	}
	for _, m := range []Mapping{bankMapping, providerMapping, semicolonMapping} {
		if err := m.Validate(); err != nil {
			t.Errorf("%s: %v", m.Provider, err)
		}
	}
}

// Importing the same rows again, even from another file, is the same
// sightings: same ids, same source refs.
func TestSameRowsSameSightings(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/bank.csv")
	if err != nil {
		t.Fatal(err)
	}
	a, err := parse(t, bankMapping, data, "november.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	reordered := lines[0] + lines[3] + lines[1]
	b, err := parse(t, bankMapping, []byte(reordered), "november-again.csv")
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{}
	for _, s := range a.sightings {
		refs[s.Txn.ID] = s.Source.Channel + ":" + s.Source.Ref
	}
	for _, s := range b.sightings {
		if refs[s.Txn.ID] != s.Source.Channel+":"+s.Source.Ref {
			t.Errorf("%s: source %s:%s, first import %s", s.Txn.ID, s.Source.Channel, s.Source.Ref, refs[s.Txn.ID])
		}
	}
}

func TestRepeatedRowIsNotAConflict(t *testing.T) {
	t.Parallel()
	data := "Transaction Ref,Value Date,Narrative,Debit,Credit,Status,Payer\n" +
		"FT1,23/11/2024 14:05,INV-1,,100.00,Posted,\n" +
		"FT1,23/11/2024 14:05,INV-1,,100.00,Posted,\n"
	got, err := parse(t, bankMapping, []byte(data), "dup.csv")
	if err != nil || len(got.rejects) != 0 || len(got.sightings) != 2 {
		t.Errorf("err %v, %d rejects, %d sightings; want the repeated row passed through", err, len(got.rejects), len(got.sightings))
	}
}
