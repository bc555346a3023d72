package golden

import (
	"fmt"
	"strings"
)

// context is how many unchanged lines Diff shows around a change.
const context = 3

// maxCells bounds the table Diff fills (lines of want times lines of got,
// after the common head and tail are set aside); past it the differing
// middle is shown whole, as removed then added.
const maxCells = 4 << 20

// Diff returns a line diff of want and got in the unified style: hunks
// headed "@@ -a,n +b,m @@", lines starting with "-" only in want, "+" only
// in got and " " in both. A last line without its newline is marked. Equal
// texts give "".
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	a, b := lines(want), lines(got)
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ops := make([]op, 0, len(a)+len(b))
	for i := range head {
		ops = append(ops, op{' ', a[i], i, i})
	}
	ops = append(ops, middle(a[head:len(a)-tail], b[head:len(b)-tail], head)...)
	for i := range tail {
		ai, bi := len(a)-tail+i, len(b)-tail+i
		ops = append(ops, op{' ', a[ai], ai, bi})
	}
	return render(ops)
}

// op is one line of the diff: its kind (' ', '-', '+'), its text and its
// index in want and in got (the position it would take where it is absent).
type op struct {
	kind   byte
	text   string
	ai, bi int
}

// lines splits s into lines that keep their newline.
func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// middle diffs a and b (both starting at line off) by their longest common
// subsequence of lines.
func middle(a, b []string, off int) []op {
	n, m := len(a), len(b)
	var ops []op
	if n*m > maxCells {
		for i, l := range a {
			ops = append(ops, op{'-', l, off + i, off})
		}
		for j, l := range b {
			ops = append(ops, op{'+', l, off + n, off + j})
		}
		return ops
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, op{' ', a[i], off + i, off + j})
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i], off + i, off + j})
			i++
		default:
			ops = append(ops, op{'+', b[j], off + i, off + j})
			j++
		}
	}
	return ops
}

// render prints the changed lines of ops with context lines around them.
func render(ops []op) string {
	var sb strings.Builder
	for start := 0; start < len(ops); {
		if ops[start].kind == ' ' {
			start++
			continue
		}
		// A hunk runs from context lines before the first change to
		// context lines after the last change that is no further than
		// 2*context unchanged lines from the next.
		lo := max(0, start-context)
		end := start
		for k := start; k < len(ops); k++ {
			if ops[k].kind != ' ' {
				end = k
			} else if k-end > 2*context {
				break
			}
		}
		hi := min(len(ops), end+context+1)
		var na, nb int
		for _, o := range ops[lo:hi] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", ops[lo].ai+1, na, ops[lo].bi+1, nb)
		for _, o := range ops[lo:hi] {
			sb.WriteByte(o.kind)
			sb.WriteString(o.text)
			if !strings.HasSuffix(o.text, "\n") {
				sb.WriteString("\n\\ no newline at end\n")
			}
		}
		start = hi
	}
	return sb.String()
}
