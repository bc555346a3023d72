package rawcsv_test

import (
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/reconcilehq/reconcile/internal/rawcsv"
)

type record struct {
	fields []string
	raw    string
	line   int
	err    string
}

func readAll(t *testing.T, r io.Reader, comma rune) []record {
	t.Helper()
	rd, err := rawcsv.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	rd.CSV.Comma = comma
	rd.CSV.FieldsPerRecord = -1
	var out []record
	for {
		fields, raw, err := rd.Read()
		if err == io.EOF {
			if raw != nil {
				t.Errorf("raw %q at EOF", raw)
			}
			return out
		}
		rec := record{fields: fields, raw: string(raw)}
		rec.line, _ = rd.CSV.FieldPos(0)
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			rec.err, rec.line = pe.Err.Error(), pe.StartLine
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
		if len(out) > 20 {
			t.Fatal("no end")
		}
	}
}

func TestReaderRaw(t *testing.T) {
	t.Parallel()
	in := "\xef\xbb\xbfid;note\r\n1;plain\r\n\r\n2;\"two\r\nlines\"\r\n3;\"broken\"x\n4;last"
	want := []record{
		{fields: []string{"id", "note"}, raw: "id;note\r\n", line: 1},
		{fields: []string{"1", "plain"}, raw: "1;plain\r\n", line: 2},
		{fields: []string{"2", "two\nlines"}, raw: "\r\n2;\"two\r\nlines\"\r\n", line: 4},
		{raw: "3;\"broken\"x\n", line: 6, err: csv.ErrQuote.Error()},
		{fields: []string{"4", "last"}, raw: "4;last", line: 7},
	}
	for name, r := range map[string]io.Reader{
		"whole":       strings.NewReader(in),
		"byte a time": iotest.OneByteReader(strings.NewReader(in)),
		"half reads":  iotest.HalfReader(strings.NewReader(in)),
	} {
		got := readAll(t, r, ';')
		if len(got) != len(want) {
			t.Fatalf("%s: %d records, want %d: %+v", name, len(got), len(want), got)
		}
		for i := range want {
			g, w := got[i], want[i]
			if w.err == "" && strings.Join(g.fields, "|") != strings.Join(w.fields, "|") || g.raw != w.raw || g.line != w.line || g.err != w.err {
				t.Errorf("%s: record %d = %+v, want %+v", name, i, g, w)
			}
		}
	}
}

// TestReaderKeepsLittle holds only the record being read, not the whole
// input read so far.
func TestReaderKeepsLittle(t *testing.T) {
	t.Parallel()
	line := strings.Repeat("x", 100) + ",y\n"
	rd, err := rawcsv.NewReader(strings.NewReader(strings.Repeat(line, 10000)))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		_, raw, err := rd.Read()
		if err == io.EOF {
			if n != 10000 {
				t.Fatalf("%d records, want 10000", n)
			}
			return
		}
		if err != nil || string(raw) != line {
			t.Fatalf("record %d: %q, %v", n, raw, err)
		}
	}
}

func TestReaderInputError(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	rd, err := rawcsv.NewReader(io.MultiReader(strings.NewReader("a,b\n"), iotest.ErrReader(boom)))
	if err != nil {
		t.Fatal(err)
	}
	if f, raw, err := rd.Read(); err != nil || string(raw) != "a,b\n" || len(f) != 2 {
		t.Fatalf("first record %q %q %v", f, raw, err)
	}
	if _, _, err := rd.Read(); !errors.Is(err, boom) {
		t.Fatalf("err %v, want %v", err, boom)
	}
}

func TestReaderRefusesUTF16(t *testing.T) {
	t.Parallel()
	_, err := rawcsv.NewReader(strings.NewReader("\xff\xfei\x00d\x00,\x00x\x00"))
	if err == nil || err.Error() != "UTF-16 is not supported: save the file as UTF-8" {
		t.Fatalf("err %v", err)
	}
}
