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
	now := p.clock()
	el := now.Sub(p.start)
	if !p.tty || el < p.After || now.Sub(p.last) < p.Every {
		return
	}
	p.last = now
	share := ""
	if total > 0 {
		share = fmt.Sprintf("  %3d%%", min(100, done*100/total))
	}
	rate := ""
	if s := el.Seconds(); s > 0 {
		rate = fmt.Sprintf("  %s lines/s", count(int(float64(lines)/s)))
	}
	line := fmt.Sprintf("reconcile %c %-12s %s lines%s  %s%s", spinner[int(el/p.Every)%len(spinner)], stage, count(lines),
		share, el.Truncate(100*time.Millisecond), rate)
	pad := max(p.lastLen-len(line), 0)
	fmt.Fprintf(p.w, "\r%s%*s", line, pad, "")
	p.lastLen = len(line)
}
