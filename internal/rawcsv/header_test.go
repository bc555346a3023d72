package rawcsv_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/rawcsv"
)

func TestHeader(t *testing.T) {
	t.Parallel()
	h := rawcsv.NewHeader([]string{" id ", "amount", "", "note", "note", ""}, nil)
	if i, err := h.Column("amount"); i != 1 || err != nil {
		t.Errorf("amount: %d %v", i, err)
	}
	if i, err := h.Column("id"); i != 0 || err != nil {
		t.Errorf("a trimmed name: %d %v", i, err)
	}
	if _, err := h.Column("currency"); !errors.Is(err, rawcsv.ErrNoColumn) || err.Error() != `column "currency" not in header` {
		t.Errorf("absent: %v", err)
	}
	_, err := h.Column("note")
	var dup *rawcsv.DuplicateColumnError
	if !errors.As(err, &dup) || !errors.Is(err, rawcsv.ErrDuplicateColumn) ||
		err.Error() != `column "note" appears more than once in the header (columns 4 and 5)` {
		t.Errorf("note twice: %v", err)
	}
	if got := strings.Join(h.Cells(), "|"); got != "id|amount||note|note|" {
		t.Errorf("cells %q", got)
	}
	if !h.Has("note") || h.Has("currency") || h.Has("") {
		t.Error("Has")
	}
}

// TestHeaderSpellings: a reader that accepts several spellings of a column
// finds it named twice when two of them are there.
func TestHeaderSpellings(t *testing.T) {
	t.Parallel()
	names := map[string]string{"receipt no.": "Receipt No.", "receipt": "Receipt No.", "paid in": "Paid In"}
	canon := func(c string) string { return names[strings.ToLower(c)] }
	h := rawcsv.NewHeader([]string{"Receipt No.", "Paid In", "Balance", "Balance", "RECEIPT", "paid in"}, canon)
	if _, err := h.Column("Balance"); !errors.Is(err, rawcsv.ErrNoColumn) {
		t.Errorf("a column the reader does not read may repeat: %v", err)
	}
	_, err := h.Column("Receipt No.")
	if err == nil || err.Error() != `column "Receipt No." appears more than once in the header (columns 1 "Receipt No." and 5 "RECEIPT")` {
		t.Errorf("two spellings: %v", err)
	}
	_, err = h.Column("Paid In")
	if err == nil || err.Error() != `column "Paid In" appears more than once in the header (columns 2 "Paid In" and 6 "paid in")` {
		t.Errorf("two cases: %v", err)
	}
	h = rawcsv.NewHeader([]string{"a", "a", "a"}, nil)
	if _, err := h.Column("a"); err == nil || err.Error() != `column "a" appears more than once in the header (columns 1, 2 and 3)` {
		t.Errorf("three times: %v", err)
	}
}

// FuzzHeader: no header panics; every column a cell names is found at a
// cell that names it, or reported named twice with each place it is at.
func FuzzHeader(f *testing.F) {
	for _, s := range []string{" id ,amount,,note,note,", "Receipt No.,Paid In,Balance,Balance,RECEIPT,paid in", "a,a,a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cells := strings.Split(line, ",")
		h := rawcsv.NewHeader(cells, strings.ToLower)
		for _, c := range h.Cells() {
			name := strings.ToLower(c)
			if name == "" {
				continue
			}
			i, err := h.Column(name)
			var dup *rawcsv.DuplicateColumnError
			switch {
			case err == nil:
				if strings.ToLower(h.Cells()[i]) != name {
					t.Fatalf("column %q found at %d (%q)", name, i, h.Cells()[i])
				}
			case errors.As(err, &dup):
				if len(dup.Positions) < 2 || len(dup.Cells) != len(dup.Positions) {
					t.Fatalf("column %q twice: %+v", name, dup)
				}
				for k, p := range dup.Positions {
					if strings.ToLower(h.Cells()[p-1]) != name || dup.Cells[k] != h.Cells()[p-1] {
						t.Fatalf("column %q twice: %+v", name, dup)
					}
				}
			default:
				t.Fatalf("column %q named by a cell: %v", name, err)
			}
		}
	})
}
