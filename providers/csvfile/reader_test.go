package csvfile

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

type failingReader struct {
	r     io.Reader
	after int
	n     int
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n >= f.after {
		return 0, errors.New("disk on fire")
	}
	if len(p) > f.after-f.n {
		p = p[:f.after-f.n]
	}
	n, err := f.r.Read(p)
	f.n += n
	return n, err
}

// A failing input stops the parse with its error instead of being read as
// an endless run of bad lines.
func TestReadFailureStops(t *testing.T) {
	t.Parallel()
	data := bankHeader + strings.Repeat(goodBankRow, 200)
	p, err := NewParser(bankMapping, fixedClock)
	if err != nil {
		t.Fatal(err)
	}
	var rejects int
	err = p.ParseStatement(&failingReader{r: strings.NewReader(data), after: 5000}, "flaky.csv",
		func(providers.Sighting) error { return nil },
		func(*ledger.ParseError, []byte) error { rejects++; return nil })
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.HasPrefix(err.Error(), "flaky.csv") {
		t.Errorf("err = %v, want the read failure naming the file", err)
	}
	if rejects > 1 {
		t.Errorf("%d rejects after the input failed", rejects)
	}
}

func TestReaderRawAndLines(t *testing.T) {
	t.Parallel()
	data := "\ufeffa,b\r\n\r\n1,\"x\r\ny\"\r\n2,z\r\n"
	r, err := NewReader(strings.NewReader(data), "raw.csv", ',')
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); len(h) != 2 || h[0] != "a" {
		t.Fatalf("header %q", h)
	}
	want := []struct {
		line int
		raw  string
	}{{3, "1,\"x\r\ny\""}, {5, "2,z"}}
	for _, w := range want {
		rec, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if rec.Line != w.line || string(rec.Raw) != w.raw {
			t.Errorf("record at line %d raw %q, want line %d raw %q", rec.Line, rec.Raw, w.line, w.raw)
		}
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last record: %v", err)
	}
}
