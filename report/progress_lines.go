package report

import (
	"fmt"
	"time"
)

// UpdateFile reports that stage has read lines lines and done of the
// total bytes of its input (total 0 when unknown), with the same rules as
// Update: nothing on a non-terminal, nothing before After, at most one
// redraw per Every.
func (p *Progress) UpdateFile(stage string, lines int, done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	el, ok := p.due()
	if !ok {
		return
	}
	share := ""
	if total > 0 {
		share = fmt.Sprintf("  %3d%%", min(100, done*100/total))
	}
	p.draw(fmt.Sprintf("reconcile %c %-12s %s lines%s  %s%s", p.spin(el), stage, count(lines),
		share, el.Truncate(100*time.Millisecond), rate(lines, "lines", el)))
}
