package rawcsv

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoColumn and ErrDuplicateColumn are the reasons Header.Column fails.
var (
	ErrNoColumn        = errors.New("not in header")
	ErrDuplicateColumn = errors.New("appears more than once in the header")
)

// Header is a header row's columns by name, under the rule every CSV reader
// of outside input follows: a column the reader reads must be named once.
// Named twice, under one spelling or under two that mean the same column,
// it is an error that names it, since which of the two is meant cannot be
// known. Columns a reader does not read may repeat, or be empty.
type Header struct {
	cells []string
	// at holds the positions of each named column.
	at map[string][]int
}

// NewHeader indexes a header row. name gives the column a cell names, in
// the reader's terms (its canonical name, whatever spelling or case the
// file uses), or "" for a cell that names no column the reader reads; nil
// means the cell itself, trimmed. Cells are kept trimmed.
func NewHeader(cells []string, name func(cell string) string) *Header {
	h := &Header{cells: make([]string, len(cells)), at: make(map[string][]int, len(cells))}
	for i, c := range cells {
		c = strings.TrimSpace(c)
		h.cells[i] = c
		n := c
		if name != nil {
			n = name(c)
		}
		if n != "" {
			h.at[n] = append(h.at[n], i)
		}
	}
	return h
}

// Cells returns the header's cells, trimmed, in file order.
func (h *Header) Cells() []string { return h.cells }

// Has reports whether some cell names the column, once or more.
func (h *Header) Has(name string) bool { return len(h.at[name]) > 0 }

// Column returns the position of the named column: an error wrapping
// ErrNoColumn when no cell names it, a *DuplicateColumnError when more than
// one does.
func (h *Header) Column(name string) (int, error) {
	switch at := h.at[name]; len(at) {
	case 0:
		return -1, fmt.Errorf("column %q %w", name, ErrNoColumn)
	case 1:
		return at[0], nil
	default:
		e := &DuplicateColumnError{Column: name}
		for _, i := range at {
			e.Positions = append(e.Positions, i+1)
			e.Cells = append(e.Cells, h.cells[i])
		}
		return -1, e
	}
}

// DuplicateColumnError reports a column the header names more than once.
// errors.Is(err, ErrDuplicateColumn) is true.
type DuplicateColumnError struct {
	// Column is the column's name in the reader's terms.
	Column string
	// Positions are the columns (1-based) that name it, and Cells the
	// header cells there.
	Positions []int
	Cells     []string
}

func (e *DuplicateColumnError) Error() string {
	var where strings.Builder
	same := true
	for _, c := range e.Cells {
		same = same && c == e.Column
	}
	for i, p := range e.Positions {
		switch {
		case i == len(e.Positions)-1 && i > 0:
			where.WriteString(" and ")
		case i > 0:
			where.WriteString(", ")
		}
		fmt.Fprintf(&where, "%d", p)
		if !same {
			fmt.Fprintf(&where, " %q", e.Cells[i])
		}
	}
	return fmt.Sprintf("column %q %v (columns %s)", e.Column, ErrDuplicateColumn, where.String())
}

// Is makes errors.Is(err, ErrDuplicateColumn) true.
func (e *DuplicateColumnError) Is(target error) bool { return target == ErrDuplicateColumn }
